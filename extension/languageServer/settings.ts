/**
 * Server settings (`kprobe.image`) from the client: pulled with
 * workspace/configuration when the client supports it, otherwise taken from
 * didChangeConfiguration pushes and initializationOptions.
 */
import type { Connection } from 'vscode-languageserver/node';
import { CONFIG_SECTION } from './constants';

export interface KprobeSettings {
  /** kernel image to check documents against when a document has no `image` header */
  image?: string;
}

function pick(raw: unknown): KprobeSettings {
  if (raw === null || typeof raw !== 'object') return {};
  const image = (raw as Record<string, unknown>).image;
  return typeof image === 'string' && image.trim() !== '' ? { image: image.trim() } : {};
}

export class SettingsSource {
  /** the client answers workspace/configuration */
  pull = false;
  private initial: KprobeSettings = {};
  private pushed: KprobeSettings | undefined;
  private readonly perDoc = new Map<string, Promise<KprobeSettings>>();

  constructor(private readonly connection: Connection) {}

  /** initializationOptions: `{ image?: string }` or `{ kprobe: { image?: string } }` */
  setInitializationOptions(opts: unknown): void {
    const nested = opts && typeof opts === 'object' ? (opts as Record<string, unknown>)[CONFIG_SECTION] : undefined;
    this.initial = { ...pick(opts), ...pick(nested) };
  }

  /** workspace/didChangeConfiguration: settings may carry `{ kprobe: {...} }` (push model) */
  changed(settings: unknown): void {
    this.perDoc.clear();
    if (!this.pull && settings && typeof settings === 'object') {
      const sec = (settings as Record<string, unknown>)[CONFIG_SECTION];
      if (sec !== undefined) this.pushed = pick(sec);
    }
  }

  forget(uri: string): void { this.perDoc.delete(uri); }

  forDocument(uri: string): Promise<KprobeSettings> {
    let p = this.perDoc.get(uri);
    if (!p) {
      p = this.load(uri);
      this.perDoc.set(uri, p);
    }
    return p;
  }

  private async load(uri: string): Promise<KprobeSettings> {
    if (this.pull) {
      try {
        const got = pick(await this.connection.workspace.getConfiguration({ scopeUri: uri, section: CONFIG_SECTION }));
        return got.image !== undefined ? got : this.initial;
      } catch {
        // a client that advertised configuration but failed the request: use what we have
      }
    }
    return this.pushed?.image !== undefined ? this.pushed : this.initial;
  }
}
