import { luaFilesIn } from '@pw/shared/lua';

/** The Lua files of the worker: the scripts in this folder, and their `includes/`. */
export const WORKER_LUA = luaFilesIn('worker', new URL('./', import.meta.url));
