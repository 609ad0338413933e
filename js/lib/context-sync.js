// Browsers have no AsyncLocalStorage (nor, yet, AsyncContext): this stand-in knows the
// attempt a call runs in until that call's first await, so `currentAttempt()` and a loop
// nested in an attempt see it only in the attempt's synchronous start.

/** AsyncLocalStorage's `run` and `getStore`, for the synchronous part of each call. */
export class AsyncLocalStorage {
  #store = undefined;

  run(store, fn, ...args) {
    const outer = this.#store;
    this.#store = store;
    try {
      return fn(...args);
    } finally {
      this.#store = outer;
    }
  }

  getStore() {
    return this.#store;
  }
}
