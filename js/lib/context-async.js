// Where the runtime has it (Node, Deno, Bun, workerd), the attempt an async call runs in is
// followed through every await by node:async_hooks' AsyncLocalStorage.

export { AsyncLocalStorage } from 'node:async_hooks';
