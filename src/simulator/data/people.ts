import { hash4, Rng, tag } from '../core/random.js';
import type { Json } from '../core/record.js';
import {
  CITIES,
  COMPANIES,
  FIRST_NAMES,
  GENDERS,
  JOB_TITLES,
  LANGUAGES,
  LAST_NAMES,
  PREFIXES,
  STREETS,
  SUFFIXES,
} from './vocab.js';

/** A person of an account's address book: contacts, registrants and speakers are drawn from the same people. */
export interface Person {
  prefix: string;
  first: string;
  middle: string;
  last: string;
  suffix: string;
  email: string;
  ccEmail: string;
  company: string;
  job: string;
  workPhone: string;
  mobile: string;
  gender: Json;
  birthDate: string | null;
  language: string;
  twitter: string;
  bio: string;
  vat: string;
  picture: string;
}

const PERSON = tag('person');

const slugs = new Map<string, string>();

/** `José O'Brien` -> `joseobrien`, memoized: the inputs come from small word lists and this sits on the hot path. */
function slug(text: string): string {
  let out = slugs.get(text);
  if (out === undefined) {
    out = text
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '');
    slugs.set(text, out);
  }
  return out;
}

const cache = new Map<string, Person[]>();
let cached = 0;
const CACHE_LIMIT = 400_000;

/**
 * The person at an index of an account's address book. Persons are immutable and reused by every registrant,
 * speaker and contact drawn from them, so they are memoized (bounded: `large` has 150k).
 */
export function person(seed: number, account: number, index: number): Person {
  const key = `${seed}:${account}`;
  let list = cache.get(key);
  if (!list) {
    list = [];
    cache.set(key, list);
  }
  let p = list[index];
  if (p === undefined) {
    p = makePerson(seed, account, index);
    if (cached < CACHE_LIMIT) {
      list[index] = p;
      cached++;
    }
  }
  return p;
}

function makePerson(seed: number, account: number, index: number): Person {
  const r = new Rng(hash4(seed, PERSON, account, index));
  const first = r.pick(FIRST_NAMES);
  const last = r.pick(LAST_NAMES);
  const company = r.pick(COMPANIES);
  const domain = slug(company) || 'example';
  const birth = r.chance(0.4)
    ? `${r.int(1950, 2004)}-${String(r.int(1, 12)).padStart(2, '0')}-${String(r.int(1, 28)).padStart(2, '0')}`
    : null;
  return {
    prefix: r.pick(PREFIXES),
    first,
    middle: r.chance(0.15) ? r.pick(FIRST_NAMES) : '',
    last,
    suffix: r.pick(SUFFIXES),
    // The index keeps emails unique within an account.
    email: `${slug(first)}.${slug(last)}${index}@${domain}.example.com`,
    ccEmail: r.chance(0.1) ? `assistant${index}@${domain}.example.com` : '',
    company,
    job: r.pick(JOB_TITLES),
    workPhone: r.chance(0.6) ? `+1-555-${String(r.int(100, 999))}-${String(r.int(1000, 9999))}` : '',
    mobile: r.chance(0.5) ? `+44 7700 ${String(r.int(100000, 999999))}` : '',
    gender: r.chance(0.8) ? (r.pick(GENDERS) as unknown as Json) : null,
    birthDate: birth,
    language: r.pick(LANGUAGES),
    twitter: r.chance(0.3) ? `@${slug(first)}${slug(last)}`.slice(0, 15) : '',
    bio: r.chance(0.2)
      ? `${first} works at ${company} as ${r.pick(JOB_TITLES) || 'a generalist'}.\nLoves "good" data.`
      : '',
    vat: r.chance(0.05) ? `GB${r.int(100000000, 999999999)}` : '',
    picture: r.chance(0.3) ? `https://cdn.example.com/img/p/${account}-${index}.jpg` : '',
  };
}

/** The person fields speakers and registrants carry, in their order: email, the parts of the name, company, job. */
export function personFields(p: Person) {
  return {
    email: p.email,
    prefix: p.prefix,
    first_name: p.first,
    middle_name: p.middle,
    last_name: p.last,
    suffix: p.suffix,
    company: p.company,
    job_title: p.job,
  };
}

/** An address object as `expand=homeAddress` (and friends) returns it. */
export function address(seed: number, key: number, kind: number): Json {
  const r = new Rng(hash4(seed, tag('address'), key, kind));
  if (kind === 3 && r.chance(0.4)) return null;
  const c = r.pick(CITIES);
  return {
    line_1: `${r.int(1, 999)} ${r.pick(STREETS)}`,
    line_2: r.chance(0.3) ? `Suite ${r.int(100, 900)}` : '',
    line_3: '',
    city: c.city,
    state: c.state,
    zip: c.zip,
    country: c.country,
  };
}
