// A venue frame rendered from a recorded one: the recorded frame, its variable fields replaced by
// named slots, is serialized once; rendering a frame is then a few string concatenations, so the
// load generator spends its CPU on sockets, not on JSON.stringify.

/** A slot for a whole JSON value (a number, a boolean, an array written by the caller). */
export const valueSlot = (name: string) => `~~#${name}~~`;
/** A slot inside a JSON string (the quotes stay in the template). */
export const textSlot = (name: string) => `~~${name}~~`;

const slots = /"~~#(\w+)~~"|~~(\w+)~~/g;

export class FrameTemplate {
  readonly #parts: string[] = [];
  readonly #names: string[] = [];

  /** `frame`: a recorded frame (parsed) with some fields set to {@link valueSlot} or {@link textSlot}. */
  constructor(frame: unknown) {
    const text = JSON.stringify(frame);
    let at = 0;
    for (const match of text.matchAll(slots)) {
      this.#parts.push(text.slice(at, match.index));
      this.#names.push(match[1] ?? match[2]!);
      at = match.index + match[0].length;
    }
    this.#parts.push(text.slice(at));
  }

  /** The frame with every slot filled; a value must already be JSON (numbers) or string content (text slots). */
  render(values: Readonly<Record<string, string | number>>): string {
    let out = this.#parts[0]!;
    for (let i = 0; i < this.#names.length; i++) out += values[this.#names[i]!]! + this.#parts[i + 1]!;
    return out;
  }
}
