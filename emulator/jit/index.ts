/**
 * The block translator (WebAssembly), per architecture: one Translator per
 * front end and mode, shared by every machine of the process (translated
 * code depends only on the guest's decoded instructions; each CPU brings
 * its own state and TLB).
 *
 * Mode: 'on' (default), 'off' (the interpreter alone: kprobe-run
 * --no-translate, launch attribute "translate": false) or 'lockstep'
 * (translated code checked against the interpreter at every exit; tests
 * and CI). KPROBE_TRANSLATE=on|off|lockstep sets the default of a process.
 */
import type { FrontEnd } from './ir';
import { Translator } from './translator';

export type TranslateMode = 'on' | 'off' | 'lockstep';

const translators = new Map<string, Translator<unknown, never>>();

/** The process default: KPROBE_TRANSLATE, else 'on'. */
export function defaultTranslateMode(): TranslateMode {
  const v = typeof process !== 'undefined' ? process.env.KPROBE_TRANSLATE : undefined;
  return v === 'off' || v === 'lockstep' ? v : 'on';
}

/** The translator for an architecture's front end in a mode, or null ('off', no front end, no guest arena). */
export function translatorFor(arch: string, fe: FrontEnd<unknown, never> | undefined, mode: TranslateMode): Translator<unknown, never> | null {
  if (mode === 'off' || fe === undefined || !Translator.available()) return null;
  const key = `${arch}:${mode}`;
  let t = translators.get(key);
  if (t === undefined) {
    t = new Translator(fe, arch);
    t.lockstep = mode === 'lockstep';
    translators.set(key, t);
  }
  return t;
}

/** Every translator made in this process (bench figures). */
export function allTranslators(): ReadonlyMap<string, Translator<unknown, never>> { return translators; }

export { Translator } from './translator';
export type { FrontEnd } from './ir';
