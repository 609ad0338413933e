// `recuo/library`: the recuo API over a librecuo of your choice.
import type recuo from './index.js';

/** Thrown when no usable librecuo can be loaded; `tried` lists every place looked at. */
export class LibraryError extends Error {
  readonly tried: string[];
}

/** The whole API (what `import recuo from 'recuo'` gives) over the library at `path`, or the usual lookup without one. */
export function openRecuo(options?: { path?: string }): typeof recuo;

/** Where the lookup would look, in order. */
export function candidates(path?: string): { path: string; from: string }[];

export const PACKAGE_VERSION: string;
