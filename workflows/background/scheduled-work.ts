/**
 * The conversation's scheduled work and plan (issue 21 §4–6): the task list, wakeups and cron
 * jobs, made by the session in one line and carried in one (`carried()`). Each registers its tool
 * route (the workflow answers these tools itself) and, for wakeups and jobs, a background-work kind
 * (no idle timeout while one is pending; cleared at the end).
 */
import type { ConversationConfig } from '../../common/config';
import type { CronFire } from '../../common/cron';
import type { CarriedState, ConversationStatus, InputOrigin } from '../definitions';
import type { ToolRoute } from '../deps/query-host';
import { CronJobs } from './cron-jobs';
import { TaskList } from './task-list';
import { Wakeups } from './wakeups';

/** What the scheduled work needs from the session (implemented by ConversationSession). */
export interface ScheduledWorkHost {
  readonly conversationId: string;
  readonly config: ConversationConfig;
  readonly subagent?: unknown;
  notify(key: string, prompt: string, origin: InputOrigin): boolean;
  registerToolRoute(route: ToolRoute): void;
  registerBackgroundWork(work: { name: string; pending(): boolean; onEnd(): Promise<void> }): void;
  refreshDetails(): void;
}

export class ScheduledWork {
  readonly tasks: TaskList;
  readonly wakeups: Wakeups;
  readonly cron: CronJobs;

  constructor(host: ScheduledWorkHost, carried: CarriedState | undefined) {
    const onChange = () => host.refreshDetails();
    const isSubagent = host.subagent !== undefined;
    this.tasks = new TaskList(carried?.taskList, onChange);
    this.wakeups = new Wakeups(carried?.wakeups, {
      get minimumSeconds() {
        return host.config.wakeupMinimumSeconds;
      },
      isSubagent,
      notify: (key, prompt) => void host.notify(key, prompt, 'wakeup'),
      onChange,
    });
    this.cron = new CronJobs(carried?.cronJobs, {
      conversationId: host.conversationId,
      get config() {
        return host.config;
      },
      isSubagent,
      notify: (key, prompt) => void host.notify(key, prompt, 'cron'),
      onChange,
    });
    for (const route of [this.tasks, this.wakeups, this.cron]) host.registerToolRoute(route);
    host.registerBackgroundWork(this.wakeups);
    host.registerBackgroundWork(this.cron);
  }

  /** The `cronFired` signal. */
  onCronFired(fire: CronFire): void {
    this.cron.onFire(fire);
  }

  /** The fields continue-as-new carries (absent when unused: runs that never used them carry what they did). */
  carried(): Pick<CarriedState, 'taskList' | 'wakeups' | 'cronJobs'> {
    const taskList = this.tasks.carried();
    const wakeups = this.wakeups.carried();
    const cronJobs = this.cron.carried();
    return { ...(taskList && { taskList }), ...(wakeups && { wakeups }), ...(cronJobs && { cronJobs }) };
  }

  /** The `status` fields (absent when empty). */
  status(): Pick<ConversationStatus, 'tasks' | 'wakeups' | 'cronJobs'> {
    const tasks = this.tasks.tasks;
    const wakeups = this.wakeups.list();
    const cronJobs = this.cron.statusList();
    return { ...(tasks.length > 0 && { tasks }), ...(wakeups.length > 0 && { wakeups }), ...(cronJobs.length > 0 && { cronJobs }) };
  }

  /** Lines for the UI's current details: the task list, then what is scheduled. */
  detailLines(): { tasks: string[]; scheduled: string[] } {
    return {
      tasks: this.tasks.lines(),
      scheduled: [
        ...this.wakeups.list().map((wakeup) => `wakeup ${wakeup.dueAt}: ${wakeup.reason}`),
        ...this.cron.statusList().map((job) => `cron ${job.id} "${job.cron}": ${job.prompt}`),
      ],
    };
  }
}
