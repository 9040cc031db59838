/** String ids shared by the kprobe language server and its client. */

/** Language id of .kprobe documents (package.json contributes.languages). */
export const KPROBE_LANGUAGE_ID = 'kprobe';
/** Configuration section the server reads with workspace/configuration (setting `kprobe.image`). */
export const CONFIG_SECTION = 'kprobe';
/** `source` of every diagnostic the server publishes. */
export const DIAGNOSTIC_SOURCE = 'kprobe';
/** Completion trigger characters: `->`, `symbol("`, `kprobe ` */
export const TRIGGER_CHARACTERS = ['>', '"', ' '];
/** Architecture assumed when no image is named (the handler language's default). */
export const DEFAULT_ARCH = 'x86_64';
