/** The zod number and zone shapes every configuration schema uses, each with the message a user reads. */
import { z } from 'zod';

export const positiveInt = (what = 'a positive integer') => {
  const error = `expected ${what}`;
  return z.number({ error }).int({ error }).positive({ error });
};

export const nonNegativeInt = () => {
  const error = 'expected an integer >= 0';
  return z.number({ error }).int({ error }).min(0, { error });
};

export const intBetween = (min: number, max: number) => {
  const error = `expected an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

export const nonNegativeNumber = () => {
  const error = 'expected a number >= 0';
  return z.number({ error }).min(0, { error });
};

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const timeZone = z.string({ error: 'expected an IANA time zone name' }).refine(isTimeZone, {
  error: 'expected an IANA time zone name such as UTC or America/New_York',
});
