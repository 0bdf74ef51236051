// Imports nothing: the operator API's shapes (operator-api/shapes.ts) use it, and the console, a
// browser program, imports those.

/**
 * A field at fault: its path (`a.b`) and what is wrong with it. An event's schema problems (a
 * quarantined webhook's among them), a release's, and the `details` of every error body are lists
 * of these.
 */
export interface Problem {
  path: string;
  message: string;
}
