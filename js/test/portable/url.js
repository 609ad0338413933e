// node:url's `fileURLToPath`, for the bundles: a URL's path (the vector files are found by name).

export function fileURLToPath(url) {
  return new URL(url).pathname;
}
