// deploy/k8s against the Kubernetes schemas (kubernetes-models) and the apps' real endpoints.
import { describe, expect, it } from 'vitest';
import { knownAppVariables } from '../src/contract.js';
import {
  K8S_DIR,
  loadManifests,
  manifestFiles,
  typeCheckManifests,
  validateManifest,
} from '../src/kubernetes.js';
import type { Manifest } from '../src/kubernetes.js';
import { asRecord, readYaml } from '../src/repo.js';

interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  ports?: { name?: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
}
interface PodSpec {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
}

const APPS = {
  ingress: { port: 'INGRESS_PORT', liveness: '/healthz', readiness: '/readyz' },
  worker: { port: 'WORKER_HEALTH_PORT', liveness: '/healthz', readiness: '/readyz' },
  recorder: { port: 'RECORDER_HEALTH_PORT', liveness: '/healthz', readiness: '/healthz' },
  dashboard: { port: 'DASHBOARD_PORT', liveness: '/healthz', readiness: '/healthz' },
} as const;

const manifests = loadManifests();
const find = (kind: string, name: string): Manifest => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in ${K8S_DIR}`);
  return found;
};
const configMap = find('ConfigMap', 'partner-webhooks') as Manifest & {
  data: Record<string, string>;
};
const secret = find('Secret', 'partner-webhooks') as Manifest & {
  stringData: Record<string, string>;
};
const podSpec = (deployment: Manifest): PodSpec =>
  (deployment as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;

describe('deploy/k8s', () => {
  it('holds only objects valid against the Kubernetes schemas', () => {
    expect(manifests.length).toBeGreaterThan(0);
    for (const manifest of manifests) validateManifest(manifest);
  });

  it('uses no unknown or misspelt keys (kubernetes-models types, checked by tsc)', () => {
    expect(typeCheckManifests(manifests)).toEqual([]);
  }, 60_000);

  it('has a kustomization naming every manifest but the example Secret', () => {
    const kustomization = asRecord(readYaml(`${K8S_DIR}/kustomization.yaml`), 'kustomization');
    expect(kustomization.apiVersion).toBe('kustomize.config.k8s.io/v1beta1');
    expect(kustomization.kind).toBe('Kustomization');
    expect([...(kustomization.resources as string[])].sort()).toEqual(
      manifestFiles().filter((file) => file !== 'secret.example.yaml'),
    );
  });
});

for (const [app, expected] of Object.entries(APPS)) {
  describe(`deploy/k8s: the ${app} Deployment`, () => {
    const deployment = find('Deployment', `partner-webhooks-${app}`);
    const spec = podSpec(deployment);
    const container = spec.containers[0]!;

    it('is a Deployment of one container of its own image, its selector matching its pods', () => {
      const { selector, template } = (
        deployment as unknown as {
          spec: {
            selector: { matchLabels: Record<string, string> };
            template: { metadata: { labels: Record<string, string> } };
          };
        }
      ).spec;
      expect(template.metadata.labels).toMatchObject(selector.matchLabels);
      expect(spec.containers).toHaveLength(1);
      expect(container.image).toMatch(new RegExp(`/${app}:[\\w.-]+$`));
    });

    it('runs as a non-root user without privilege escalation, with requests and limits', () => {
      expect(spec.securityContext?.runAsNonRoot).toBe(true);
      expect(spec.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      for (const resource of ['cpu', 'memory']) {
        expect(container.resources?.requests?.[resource], `requests.${resource}`).toBeDefined();
        expect(container.resources?.limits?.[resource], `limits.${resource}`).toBeDefined();
      }
    });

    it('takes its settings from the ConfigMap and its secrets from the Secret', () => {
      expect(container.envFrom).toContainEqual({ configMapRef: { name: 'partner-webhooks' } });
      const known = knownAppVariables();
      for (const variable of container.env ?? []) {
        expect(known, variable.name).toContain(variable.name);
        const ref = variable.valueFrom?.secretKeyRef;
        expect(ref?.name).toBe('partner-webhooks');
        expect(Object.keys(secret.stringData)).toContain(ref?.key);
      }
      expect(container.env?.map((variable) => variable.name)).toContain('REDIS_URL');
    });

    it(`probes ${expected.liveness} and ${expected.readiness} on the port in ${expected.port}`, () => {
      const portOf = (probe: Probe | undefined) => {
        const port = probe?.httpGet?.port;
        return typeof port === 'number'
          ? port
          : container.ports?.find((candidate) => candidate.name === port)?.containerPort;
      };
      const appPort = Number(configMap.data[expected.port]);
      expect(container.ports?.map((port) => port.containerPort)).toEqual([appPort]);
      expect(container.livenessProbe?.httpGet?.path).toBe(expected.liveness);
      expect(container.readinessProbe?.httpGet?.path).toBe(expected.readiness);
      expect(portOf(container.livenessProbe)).toBe(appPort);
      expect(portOf(container.readinessProbe)).toBe(appPort);
    });
  });
}

describe('deploy/k8s: Services and scaling', () => {
  it('has Services for the ingress and the dashboard, aimed at their named ports', () => {
    for (const app of ['ingress', 'dashboard']) {
      const service = find('Service', `partner-webhooks-${app}`) as Manifest & {
        spec: { selector: Record<string, string>; ports: { targetPort: string }[] };
      };
      const deployment = find('Deployment', `partner-webhooks-${app}`);
      const labels = (
        deployment as unknown as { spec: { template: { metadata: { labels: object } } } }
      ).spec.template.metadata.labels;
      expect(labels).toMatchObject(service.spec.selector);
      const names = podSpec(deployment).containers[0]!.ports!.map((port) => port.name);
      for (const port of service.spec.ports) expect(names).toContain(port.targetPort);
    }
  });

  it('scales the worker with an autoscaling/v2 HorizontalPodAutoscaler', () => {
    const hpa = find('HorizontalPodAutoscaler', 'partner-webhooks-worker') as Manifest & {
      spec: {
        scaleTargetRef: { apiVersion: string; kind: string; name: string };
        minReplicas: number;
        maxReplicas: number;
      };
    };
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'partner-webhooks-worker',
    });
    expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
    // The HPA owns the replica count.
    expect(find('Deployment', 'partner-webhooks-worker')).not.toHaveProperty('spec.replicas');
  });
});

describe('deploy/k8s: the record store and the settings', () => {
  it('gives the recorder and the dashboard DATABASE_URL from the Secret, never the ConfigMap', () => {
    for (const app of ['recorder', 'dashboard']) {
      const container = podSpec(find('Deployment', `partner-webhooks-${app}`)).containers[0]!;
      expect(container.env, app).toContainEqual({
        name: 'DATABASE_URL',
        valueFrom: { secretKeyRef: { name: 'partner-webhooks', key: 'DATABASE_URL' } },
      });
    }
    for (const app of ['ingress', 'worker']) {
      const container = podSpec(find('Deployment', `partner-webhooks-${app}`)).containers[0]!;
      expect(
        container.env?.map((variable) => variable.name),
        app,
      ).not.toContain('DATABASE_URL');
    }
    expect(new URL(secret.stringData.DATABASE_URL!).protocol).toBe('postgres:');
    expect(configMap.data).not.toHaveProperty('DATABASE_URL');
    expect(configMap.data.RECORD_RETENTION_DAYS).toBe('90');
    expect(configMap.data.RECORD_TTL_SECONDS).toBe('3600');
  });

  it('runs one recorder, without an autoscaler, and no PostgreSQL of its own', () => {
    const recorder = find('Deployment', 'partner-webhooks-recorder') as Manifest & {
      spec: { replicas?: number };
    };
    expect(recorder.spec.replicas).toBe(1);
    const autoscaled = manifests
      .filter((manifest) => manifest.kind === 'HorizontalPodAutoscaler')
      .map((hpa) => (hpa as unknown as { spec: { scaleTargetRef: { name: string } } }).spec);
    expect(autoscaled.map((spec) => spec.scaleTargetRef.name)).not.toContain(
      'partner-webhooks-recorder',
    );
    // A managed PostgreSQL (or an operator's) is expected: no StatefulSet, no postgres image.
    expect(manifests.map((manifest) => manifest.kind)).not.toContain('StatefulSet');
    for (const manifest of manifests.filter((m) => m.kind === 'Deployment')) {
      for (const container of podSpec(manifest).containers)
        expect(container.image, manifest.metadata.name).not.toMatch(/(^|\/)postgres(ql)?:/);
    }
  });

  it('names only the contract’s or docs/configuration.md’s variables in the ConfigMap and the Secret', () => {
    const known = knownAppVariables();
    for (const variable of [...Object.keys(configMap.data), ...Object.keys(secret.stringData)])
      expect(known, variable).toContain(variable);
    // Production: the apps refuse development defaults (checked by starting them, serve.test.ts).
    expect(configMap.data.NODE_ENV).toBe('production');
  });
});
