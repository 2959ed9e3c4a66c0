/** File-system helpers every layer that writes for the user shares. */
export { makeDirectory } from "./make-directory.js";
