/**
 * Firing times of a cron job, as many as the `cron` library can give. Its `nextDates(n)` throws as soon as one
 * date lies beyond its horizon (8 years from now): 200 dates of a yearly schedule ("0 0 1 1 *") crashed `schedule`
 * and `serve` with "No execution date was found in the next 8 years", though the expression is valid and the
 * library computes its next date fine. Here the dates stop at the horizon instead.
 */

/** What is used of a `CronJob`: its next date, and the next date after a given one (in the job's zone). */
interface CronDates<D extends { toMillis(): number }> {
  nextDate(): D;
  cronTime: { getNextDateFrom(start: D): D };
}

/** Up to `count` next firing times (epoch ms): fewer when the library finds no further date within its horizon. */
export function nextFiringTimes<D extends { toMillis(): number }>(job: CronDates<D>, count: number): number[] {
  const times: number[] = [];
  let date: D;
  try {
    date = job.nextDate();
  } catch {
    return times;
  }
  times.push(date.toMillis());
  while (times.length < count) {
    try {
      // The date carries the job's zone, so each step stays in it (as the library's own nextDates does).
      date = job.cronTime.getNextDateFrom(date);
    } catch {
      break;
    }
    times.push(date.toMillis());
  }
  return times;
}

/**
 * Why a valid expression can still never run (a date that does not exist, such as "0 0 30 2 *"), or null: the
 * library accepts it but finds no date to fire on, and would throw its raw message at the first `nextDate()`.
 */
export function neverFires(job: { nextDate(): unknown }): string | null {
  try {
    job.nextDate();
    return null;
  } catch {
    return 'never fires: no such date in the next 8 years (a day the month does not have?)';
  }
}
