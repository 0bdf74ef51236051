// Hash routes (`#/webhooks/wh_…?…`): a link holds the page and its query, and the dashboard
// serves one page for all of them.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  /** The path after `#`, e.g. `/webhooks/wh_…`. */
  path: string;
  params: URLSearchParams;
}

function current(): Route {
  const hash = window.location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?');
  return { path, params: new URLSearchParams(search) };
}

/** The route, kept up to date as the hash changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const changed = () => setRoute(current());
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}

/** A link target for `path` with the query's non-empty values. */
export function href(path: string, params: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  const text = search.toString();
  return `#${path}${text ? `?${text}` : ''}`;
}

export function navigate(path: string, params: Record<string, string | undefined> = {}): void {
  window.location.hash = href(path, params);
}
