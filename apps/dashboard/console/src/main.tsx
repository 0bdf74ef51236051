// The operator console: one page, its views chosen by the URL's hash.
import { render } from 'preact';
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { AuditPage } from './pages/audit.js';
import { CircuitsPage } from './pages/circuits.js';
import { DeadLettersPage } from './pages/dead-letters.js';
import { QuarantinePage } from './pages/quarantine.js';
import { RulesPage } from './pages/rules.js';
import { SearchPage } from './pages/search.js';
import { TrendsPage } from './pages/trends.js';
import { WebhookPage } from './pages/webhook.js';
import { href, useRoute } from './router.js';
import type { Route } from './router.js';

const NAV = [
  { path: '/', label: 'Search' },
  { path: '/dead-letters', label: 'Dead letters' },
  { path: '/quarantine', label: 'Quarantine' },
  { path: '/rules', label: 'Rules' },
  { path: '/circuits', label: 'Circuits' },
  { path: '/audit', label: 'Audit log' },
  { path: '/trends', label: 'Trends' },
];

function Page({ route }: { route: Route }) {
  const webhook = /^\/webhooks\/([^/]+)$/.exec(route.path);
  if (webhook?.[1]) return <WebhookPage webhookId={decodeURIComponent(webhook[1])} />;
  switch (route.path) {
    case '/dead-letters':
      return <DeadLettersPage params={route.params} />;
    case '/quarantine':
      return <QuarantinePage params={route.params} />;
    case '/rules':
      return <RulesPage />;
    case '/circuits':
      return <CircuitsPage />;
    case '/audit':
      return <AuditPage params={route.params} />;
    case '/trends':
      return <TrendsPage />;
    case '/':
      return <SearchPage params={route.params} key={route.params.toString()} />;
    default:
      return (
        <p>
          No such page. <a href={href('/')}>Search</a>
        </p>
      );
  }
}

function Console() {
  const route = useRoute();
  const section = route.path.startsWith('/webhooks/') ? '/' : route.path;
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to the page
      </button>
      <header class="top">
        <strong>partner-webhooks</strong>
        <nav aria-label="Console">
          {NAV.map((item) => (
            <a
              key={item.path}
              href={href(item.path)}
              aria-current={section === item.path ? 'page' : undefined}
            >
              {item.label}
            </a>
          ))}
          <a href="admin/queues">Queue board</a>
          <a href="docs/">API docs</a>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}

const root = document.getElementById('console');
if (root) render(<Console />, root);
