import { luaFilesIn } from './lua-script.js';

/** The Lua files of @pw/shared: the scripts in this folder, and their `includes/`. */
export const SHARED_LUA = luaFilesIn('@pw/shared', new URL('./', import.meta.url));
