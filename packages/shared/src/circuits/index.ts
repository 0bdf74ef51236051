// @pw/shared/circuits: the circuit breakers' keys and states, and the board that reads and
// overrides them.
export * from './circuit-keys.js';
export * from './circuit-board.js';
