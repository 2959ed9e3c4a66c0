/** Quoting for the shell commands invocache prints for people to paste. */
export { shellQuote } from "./quote.js";
