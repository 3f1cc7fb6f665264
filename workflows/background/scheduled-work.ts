/**
 * The conversation's scheduled work and plan (issue 21 §4–6): the task list, wakeups and cron
 * jobs, one part of the session (session/session-part.ts), carried in one `carried()`. Each is a
 * tool route (the workflow answers these tools itself) and wakeups and jobs are background-work
 * kinds (no idle timeout while one is pending; cleared at the end).
 */
import type { CronFire } from '../../common/cron';
import type { CarriedState, ConversationStatus } from '../definitions';
import type { ToolRoute } from '../deps/query-host';
import type { BackgroundWorkKind, PartContext, PartDetails, PartInternalHandlers, SessionPart } from '../session/session-part';
import { CronJobs } from './cron-jobs';
import { TaskList } from './task-list';
import { Wakeups } from './wakeups';

export class ScheduledWork implements SessionPart {
  readonly name = 'scheduled work';
  readonly tasks: TaskList;
  readonly wakeups: Wakeups;
  readonly cron: CronJobs;
  readonly routes: readonly ToolRoute[];
  readonly backgroundWork: readonly BackgroundWorkKind[];
  readonly internalHandlers: PartInternalHandlers = { cronFired: (fire) => this.onCronFired(fire) };

  constructor(
    context: Pick<PartContext, 'conversationId' | 'config' | 'subagent' | 'notify' | 'refreshDetails'>,
    carried: Pick<CarriedState, 'taskList' | 'wakeups' | 'cronJobs'> | undefined,
  ) {
    const onChange = () => context.refreshDetails();
    const isSubagent = context.subagent !== undefined;
    this.tasks = new TaskList(carried?.taskList, onChange);
    this.wakeups = new Wakeups(carried?.wakeups, {
      get minimumSeconds() {
        return context.config.wakeupMinimumSeconds;
      },
      isSubagent,
      notify: (key, prompt) => void context.notify(key, prompt, 'wakeup'),
      onChange,
    });
    this.cron = new CronJobs(carried?.cronJobs, {
      conversationId: context.conversationId,
      get config() {
        return context.config;
      },
      isSubagent,
      notify: (key, prompt) => void context.notify(key, prompt, 'cron'),
      onChange,
    });
    this.routes = [this.tasks, this.wakeups, this.cron];
    this.backgroundWork = [this.wakeups, this.cron];
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
  details(): Pick<PartDetails, 'tasks' | 'scheduled'> {
    return {
      tasks: this.tasks.lines(),
      scheduled: [
        ...this.wakeups.list().map((wakeup) => `wakeup ${wakeup.dueAt}: ${wakeup.reason}`),
        ...this.cron.statusList().map((job) => `cron ${job.id} "${job.cron}": ${job.prompt}`),
      ],
    };
  }
}
