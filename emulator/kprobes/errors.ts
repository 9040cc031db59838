/** Control-flow signals used inside the engine (never escape to callers). */

/** A handler oopsed the CPU; unwinds to the trap handler, which resets the control block. */
export class HandlerOops {
  constructor(readonly message: string) {}
}

/** jprobe_return(): unwinds the running jprobe entry handler (the handler "never returns"). */
export class JprobeReturn {
  readonly jprobeReturn = true;
}
