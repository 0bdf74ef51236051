import { luaFilesIn } from '@pw/shared/lua';

/** The Lua files of the dashboard: the scripts in this folder. */
export const DASHBOARD_LUA = luaFilesIn('dashboard', new URL('./', import.meta.url));
