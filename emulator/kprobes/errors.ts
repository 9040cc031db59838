/** Control-flow signals used inside the engine (never escape to callers). */

/** A handler oopsed the CPU; unwinds to the trap handler, which resets the control block. */
export class HandlerOops {
  constructor(readonly message: string) {}
}

/** jprobe_return(): unwinds the running jprobe entry handler (the handler "never returns"). */
export class JprobeReturn {
  readonly jprobeReturn = true;
}

/**
 * The one JprobeReturn thrown (no allocation per hit). A throw costs
 * ~0.5 us of host time in V8 whatever is thrown; an entry handler that
 * simply returns ends the same way without it.
 */
export const JPROBE_RETURN = new JprobeReturn();
