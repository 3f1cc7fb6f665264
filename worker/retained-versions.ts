/**
 * A single machine strands nothing (issue 30): for every kept bundle of ANOTHER version of this
 * worker's deployment, while any open run is still pinned to that version (or it is the
 * deployment's current version), this process runs an
 * extra Worker for it — same task queue, same activities, that bundle, that version — and when
 * none is pinned any more it stops that Worker and deletes the bundle. Checked at start and every
 * `intervalMs`. docs/deployment.md, "Upgrades with Worker Versioning".
 */
import type { WorkflowService } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { KeptBundles } from './workflow-bundles';
import { type VersionRef, pinnedOpenRuns } from './versioning';

export interface RetainedVersionsOptions {
  service: WorkflowService;
  namespace: string;
  deploymentName: string;
  /** This process's own version: never retired here. */
  currentBuildId: string;
  bundles: KeptBundles;
  /** Creates (not runs) the Worker for an older version from its bundle's code. */
  createWorker(buildId: string, code: string): Promise<Worker>;
  intervalMs?: number;
  log?(line: string): void;
}

export class RetainedVersions {
  private readonly running = new Map<string, { worker: Worker; done: Promise<void> }>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: RetainedVersionsOptions) {}

  /** Build ids of older versions this process serves right now. */
  get serving(): string[] {
    return [...this.running.keys()];
  }

  /** Checks once now, then every `intervalMs` until {@link stop}. */
  async start(): Promise<void> {
    await this.check();
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.checking = this.check().finally(() => {
          if (!this.stopped) schedule();
        });
      }, this.options.intervalMs ?? 60_000);
      this.timer.unref();
    };
    if (!this.stopped) schedule();
  }

  /** One pass over the kept bundles: serve the pinned versions, retire the drained ones. */
  async check(): Promise<void> {
    const { bundles, currentBuildId } = this.options;
    // The deployment's current version, when this process is not on it (this machine restarted on older
    // code, a rollback by redeploy): served from its kept bundle and never deleted, since new
    // conversations go there before any of them counts as pinned.
    const deploymentCurrent = await this.options.service
      .describeWorkerDeployment({ namespace: this.options.namespace, deploymentName: this.options.deploymentName })
      .then((response) => response.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined)
      .catch(() => undefined);
    for (const buildId of await bundles.buildIds()) {
      if (buildId === currentBuildId || this.stopped) continue;
      const ref: VersionRef = { namespace: this.options.namespace, deploymentName: this.options.deploymentName, buildId };
      let pinned: number;
      try {
        pinned = buildId === deploymentCurrent ? Math.max(1, await pinnedOpenRuns(this.options.service, ref)) : await pinnedOpenRuns(this.options.service, ref);
      } catch (error) {
        this.log(`could not count the runs pinned to ${buildId} (kept for now): ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      const entry = this.running.get(buildId);
      if (pinned > 0 && !entry) {
        const worker = await this.options.createWorker(buildId, await bundles.read(buildId));
        const done = worker.run().catch((error: unknown) => this.log(`the worker of version ${buildId} failed: ${String(error)}`));
        this.running.set(buildId, { worker, done });
        this.log(
          buildId === deploymentCurrent
            ? `serving the deployment's current version ${this.options.deploymentName}:${buildId} from its kept bundle`
            : `serving ${pinned} run(s) still pinned to version ${this.options.deploymentName}:${buildId} from its kept bundle`,
        );
      } else if (pinned === 0) {
        if (entry) await this.stopOne(buildId);
        await bundles.remove(buildId);
        this.log(`version ${this.options.deploymentName}:${buildId} has no pinned run left: its bundle is deleted`);
      }
    }
  }

  /** Stops the older versions' Workers (the kept bundles stay for the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.checking.catch(() => undefined);
    await Promise.all(this.serving.map((buildId) => this.stopOne(buildId)));
  }

  private async stopOne(buildId: string): Promise<void> {
    const entry = this.running.get(buildId);
    if (!entry) return;
    this.running.delete(buildId);
    if (entry.worker.getState() === 'RUNNING') entry.worker.shutdown();
    await entry.done;
  }

  private log(line: string): void {
    (this.options.log ?? ((text: string) => console.log(`durable-agent worker: ${text}`)))(line);
  }
}
