import { hash4, Rng, tag, unit } from '../core/random.js';
import { CUSTOM, type CustomDef, type Rec } from '../core/record.js';
import { customValues, DEF_TEMPLATES, defRecord, makeDef } from './defs.js';
import { person } from './people.js';
import type { AccountPlan } from './sizes.js';
import { DAY, timeline } from './timeline.js';
import { CURRENCY_BY_ZONE, EVENT_ADJECTIVES, EVENT_KINDS, EVENT_TOPICS, TIMEZONES } from './vocab.js';
import type { AccountInfo, EventInfo, World } from './world.js';

/** Account-level definitions kept for generating custom values of contacts, sessions and sponsors. */
export interface AccountDefs {
  contact: CustomDef[];
  session: CustomDef[];
  sponsor: CustomDef[];
}

function addDefs(world: World, stream: string, account: number): CustomDef[] {
  const templates = DEF_TEMPLATES[stream]!;
  const defs: CustomDef[] = [];
  world.addStored(stream, account, 0, templates.length, (id, i) => {
    const def = makeDef(id, templates[i]!);
    defs.push(def);
    return defRecord(def, i);
  });
  return defs;
}

export function buildAccount(world: World, index: number, plan: AccountPlan): { info: AccountInfo; defs: AccountDefs } {
  const created = world.anchor - 1200 * DAY;
  const info: AccountInfo = {
    index,
    accountId: 31 + index,
    plan,
    created,
    contactCount: plan.contacts,
    contactIdStart: world.table('contacts').nextId,
    events: [],
  };

  const folderIds: number[] = [];
  const folderNames = ['Conferences', 'Regional Meetups', 'Archive'];
  world.addStored('event_folders', index, 0, folderNames.length, (id, i) => {
    folderIds.push(id);
    return { id, name: folderNames[i]!, parent_id: i === 2 ? folderIds[0]! : null, sort_order: i + 1 };
  });
  addDefs(world, 'event_fields', index);
  const defs: AccountDefs = {
    contact: addDefs(world, 'contact_fields', index),
    session: addDefs(world, 'session_fields', index),
    sponsor: addDefs(world, 'sponsor_fields', index),
  };

  buildContacts(world, info, defs.contact);
  buildEvents(world, info, folderIds);
  buildWebhooks(world, info);
  buildDataLists(world, info);
  return { info, defs };
}

const CONTACT = tag('contact');

/** Contacts are generated on demand: `large` has 150k of them. created_at grows with the id. */
function buildContacts(world: World, info: AccountInfo, defs: CustomDef[]): void {
  const { seed, anchor } = world;
  const count = info.contactCount;
  const from = info.created;
  const span = anchor - 2 * DAY - from;
  const created = (i: number) => from + Math.floor((span * (i + 0.5 * unit(seed, CONTACT, info.index, i))) / count);
  const updated = (i: number) => {
    const c = created(i);
    const x = unit(seed, CONTACT + 1, info.index, i);
    return c + Math.floor(x * x * x * (anchor - 60 - c));
  };
  world.addLazy('contacts', info.index, 0, (idStart) => ({
    count,
    idStart,
    time: (i, field) =>
      field === 'updated_at'
        ? world.zone.wall(updated(i))
        : field === 'created_at'
          ? world.zone.wall(created(i))
          : null,
    record(i) {
      const p = person(seed, info.index, i);
      const r = new Rng(hash4(seed, CONTACT + 2, info.index, i));
      const rec: Rec = {
        id: idStart + i,
        account_id: info.accountId,
        prefix: p.prefix,
        first_name: p.first,
        middle_name: p.middle,
        last_name: p.last,
        suffix: p.suffix,
        email: p.email,
        cc_email: p.ccEmail,
        company: p.company,
        job_title: p.job,
        work_phone: p.workPhone,
        mobile_phone: p.mobile,
        gender: p.gender,
        birth_date: p.birthDate,
        language: p.language,
        bio: p.bio,
        notes: r.chance(0.1) ? 'Met at the booth; follow up in Q3.' : '',
        profile_picture: p.picture,
        twitter_handle: p.twitter,
        vat_number: p.vat,
        subscribe_status: r.weighted(['subscribed', 'unsubscribed', 'pending'], [80, 15, 5]),
        created_at: world.ts(created(i)),
        updated_at: world.ts(updated(i)),
      };
      rec[CUSTOM] = customValues(defs, r);
      return rec;
    },
  }));
}

const EVENT = tag('event');

function buildEvents(world: World, info: AccountInfo, folderIds: number[]): void {
  const { seed } = world;
  world.addStored('events', info.index, 0, info.plan.events.length, (id, k) => {
    const plan = info.plan.events[k]!;
    const r = new Rng(hash4(seed, EVENT, id));
    const t = timeline(seed, id, plan.status, world.anchor, plan.ageDays);
    const timezone = TIMEZONES[(id * 3 + info.index) % TIMEZONES.length]!;
    const name = `${r.pick(EVENT_ADJECTIVES)} ${r.pick(EVENT_TOPICS)} ${r.pick(EVENT_KINDS)} ${new Date(t.start * 1000).getUTCFullYear()}`;
    const slugName = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const event: EventInfo = {
      id,
      account: info.index,
      index: k,
      plan,
      timezone,
      currency: CURRENCY_BY_ZONE[timezone] ?? 'USD',
      taxRate: [0, 0.07, 0.2, 0.19, 0.1][id % 5]!,
      t,
      sessionIds: [],
      sessionCents: new Map(),
      regTypes: [],
      packages: [],
      discountCodes: [],
      questions: [],
      sponsorIds: [],
      groupIdStart: 0,
      registrantIdStart: 0,
    };
    world.events.set(id, event);
    info.events.push(event);
    const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
    const creator = 9000 + info.index * 10 + r.int(1, 5);
    const updated = Math.max(t.created, Math.min(t.touchTo, t.regTo + r.int(0, 10) * DAY));
    return {
      id,
      name,
      status: plan.status,
      url: `https://events.example.com/${slugName}-${id}`,
      domain: 'events.example.com',
      hashtag: `#${name.replace(/[^A-Za-z]/g, '').slice(0, 12)}`,
      description: `${name}: two days of talks, workshops & networking.`,
      organizer_id: 500 + info.index,
      folder_id: plan.status === 'archived' ? folderIds[2]! : r.chance(0.7) ? folderIds[0]! : null,
      type_id: r.int(1, 4),
      start_date: day(t.start),
      end_date: day(t.end),
      start_time: '09:00:00',
      end_time: '18:00:00',
      close_date: plan.status === 'draft' ? null : day(t.regTo),
      close_time: plan.status === 'draft' ? null : '23:59:00',
      timezone,
      capacity: Math.max(50, Math.ceil((plan.registrants * 1.2) / 50) * 50),
      target_attendance: Math.ceil(plan.registrants / 10) * 10,
      free_event: plan.free === true,
      apply_to_attend: plan.applyToAttend === true,
      webinar_url: r.chance(0.3) ? `https://webinar.example.com/j/${r.int(100000, 999999)}` : '',
      created_at: world.ts(t.created),
      created_by: creator,
      updated_at: world.ts(updated),
      updated_by: creator,
    };
  });
}

function buildWebhooks(world: World, info: AccountInfo): void {
  const { seed } = world;
  const groupIds: number[] = [];
  const groupNames = ['Primary CRM sync', 'Finance alerts'];
  world.addStored('webhook_groups', info.index, 0, groupNames.length, (id, i) => {
    groupIds.push(id);
    const at = world.ts(info.created + (100 + i * 40) * DAY);
    return {
      id,
      name: `${groupNames[i]!} (${info.plan.name})`,
      headers: [{ key: 'X-Api-Key', value: `k-${hash4(seed, id).toString(36)}` }],
      notification_emails: [`ops+${id}@example.com`],
      created_at: at,
      created_by: 9001,
      updated_at: at,
      updated_by: 9001,
    };
  });
  const objects = [
    'registrant',
    'event',
    'session',
    'contact',
    'speaker',
    'sponsor',
    'session_attendance',
    'registrant_line_item',
  ];
  const eventIds = info.events.map((e) => e.id);
  world.addStored('webhooks', info.index, 0, info.plan.webhooks, (id, i) => {
    const r = new Rng(hash4(seed, tag('webhook'), id));
    const anyEvent = i % 2 === 0;
    const created = info.created + (150 + i * 20) * DAY;
    return {
      id,
      name: `Notify ${objects[i % objects.length]} changes`,
      url: `https://hooks.example.com/in/${id}`,
      content_type: i % 3 === 2 ? 'post' : 'json',
      post_field_data: '',
      use_default_fields: true,
      custom_fields: [],
      notes: '',
      trigger_object: objects[i % objects.length]!,
      trigger_on_insert: true,
      trigger_on_update: r.chance(0.8),
      trigger_on_delete: r.chance(0.5),
      all_fields: true,
      fields: [],
      public_user: true,
      admin_user: true,
      api_call: i % 2 === 0,
      any_event: anyEvent,
      event_ids: anyEvent ? [] : r.sample(eventIds, Math.min(2, eventIds.length)),
      group_id: groupIds[i % groupIds.length]!,
      headers: i % 2 ? [{ key: 'Authorization', value: 'Bearer s3cr3t' }] : [],
      enabled: i % 4 !== 3,
      created_at: world.ts(created),
      created_by: 9001,
      updated_at: world.ts(created + r.int(0, 200) * DAY),
      updated_by: 9001,
    };
  });
}

function buildDataLists(world: World, info: AccountInfo): void {
  const names = ['Countries', 'Industries', 'Hotels', 'Dietary options'];
  const listIds: number[] = [];
  world.addStored('data_lists', info.index, 0, info.plan.dataLists, (id, i) => {
    listIds.push(id);
    return { id, name: names[i % names.length]!, description: `Values for ${names[i % names.length]!.toLowerCase()}` };
  });
  for (const listId of listIds) {
    world.addStored('data_list_items', info.index, listId, info.plan.dataListItems, (id, i) => ({
      id,
      data_list_id: listId,
      value: `Option ${i + 1} of list ${listId}`,
      sort_order: i + 1,
    }));
  }
}
