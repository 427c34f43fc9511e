import { hash4, Rng, tag } from '../core/random.js';
import { CUSTOM, type Rec } from '../core/record.js';
import { customValues, defRecord, makeDef, questionTemplate } from './defs.js';
import type { AccountDefs } from './gen-account.js';
import { person, personFields } from './people.js';
import { eventScale } from './sizes.js';
import { DAY, HOUR } from './timeline.js';
import {
  COMPANIES,
  PACKAGES,
  REG_TYPES,
  ROOMS,
  SESSION_SUBJECTS,
  SESSION_WORDS,
  SPONSOR_LEVELS,
  TRACK_COLORS,
  TRACK_NAMES,
} from './vocab.js';
import type { AccountInfo, EventInfo, World } from './world.js';

const money = (cents: number) => (cents / 100).toFixed(2);
const REG_TYPE_CENTS: Record<string, number> = {
  Attendee: 29900,
  VIP: 89900,
  Speaker: 0,
  Press: 0,
  Exhibitor: 49900,
  Student: 9900,
  Staff: 0,
};

/** Builds the stored (small) event-scoped streams of one event and records the ids registrants refer to. */
export function buildEventStreams(world: World, account: AccountInfo, event: EventInfo, defs: AccountDefs): void {
  const { seed } = world;
  const n = eventScale(event.plan.registrants, event.plan.questions);
  const t = event.t;
  const eid = event.id;
  const free = event.plan.free === true;
  /** A creation time during event set-up and a later update, both before touchTo. */
  const stamps = (r: Rng) => {
    const created = t.created + r.int(HOUR, Math.max(HOUR, t.regFrom - t.created));
    const updated = Math.min(t.touchTo, created + Math.floor(r.next() ** 2 * (t.touchTo - created)));
    return { created_at: world.ts(created), updated_at: world.ts(Math.max(created, updated)) };
  };
  const rng = (stream: string, id: number) => new Rng(hash4(seed, tag(stream), id));
  /** Adds this event's records of `stream` as `world.addStored` does, and returns their ids in order. */
  const addCollectingIds = (stream: string, count: number, build: (id: number, i: number) => Rec): number[] => {
    const ids: number[] = [];
    world.addStored(stream, account.index, eid, count, (id, i) => {
      ids.push(id);
      return build(id, i);
    });
    return ids;
  };

  const trackIds = addCollectingIds('tracks', n.tracks, (id, i) => ({
    id,
    event_id: eid,
    name: TRACK_NAMES[i % TRACK_NAMES.length]!,
    color: TRACK_COLORS[i % TRACK_COLORS.length]!,
    description: '',
    sort_order: i + 1,
  }));
  const locationIds = addCollectingIds('session_locations', n.locations, (id, i) => ({
    id,
    event_id: eid,
    name: ROOMS[i % ROOMS.length]!,
    building: i < 4 ? 'Main Building' : 'Annex',
    floor: String((i % 3) + 1),
    capacity: [500, 250, 80, 60, 40, 120, 30, 24][i % 8]!,
    description: '',
  }));

  world.addStored('sessions', account.index, eid, n.sessions, (id, i) => {
    const r = rng('sessions', id);
    event.sessionIds.push(id);
    const kind = SESSION_WORDS[i % SESSION_WORDS.length]!;
    const paid = !free && kind === 'Workshop';
    if (paid) event.sessionCents.set(id, 4900 + 1000 * (i % 3));
    const day = t.start + Math.floor(i / 8) * DAY;
    const startHour = 9 + (i % 8);
    const rec: Rec = {
      id,
      event_id: eid,
      name: `${kind}: ${r.pick(SESSION_SUBJECTS)}`,
      admin_short_name: `S${i + 1}`,
      badge_name: kind.slice(0, 12),
      description: r.chance(0.7) ? `Join us for a ${kind.toLowerCase()} on ${r.pick(SESSION_SUBJECTS)}.` : '',
      date: new Date(day * 1000).toISOString().slice(0, 10),
      start_time: `${String(startHour).padStart(2, '0')}:00:00`,
      end_time: `${String(startHour).padStart(2, '0')}:${r.pick(['45', '50', '30'])}:00`,
      timezone: event.timezone,
      use_event_timezone: true,
      capacity: r.pick([0, 30, 50, 100, 200]),
      notes: '',
      location_id: r.chance(0.9) ? locationIds[i % locationIds.length]! : null,
      track_id: r.chance(0.85) ? trackIds[i % trackIds.length]! : null,
      type_id: (i % 4) + 1,
      session_status: event.plan.status === 'draft' ? 'draft' : r.chance(0.95) ? 'active' : 'hidden',
      session_included: !paid,
      webinar_url: '',
      direct_link: `https://events.example.com/e/${eid}/s/${id}`,
      virtual_link: r.chance(0.3) ? `https://stream.example.com/${id}` : '',
      ...stamps(r),
    };
    rec[CUSTOM] = customValues(defs.session, r);
    return rec;
  });

  const contacts = account.contactCount;
  world.addStored('speakers', account.index, eid, n.speakers, (id, i) => {
    const r = rng('speakers', id);
    const pIndex = hash4(seed, 11, eid, i) % contacts;
    const p = person(seed, account.index, pIndex);
    const s = stamps(r);
    const sessions = new Map<number, { created_at: string; updated_at: string }>();
    sessions.set(event.sessionIds[i % event.sessionIds.length]!, {
      created_at: s.created_at,
      updated_at: s.created_at,
    });
    if (r.chance(0.3)) {
      sessions.set(event.sessionIds[(i * 7 + 3) % event.sessionIds.length]!, {
        created_at: s.created_at,
        updated_at: s.updated_at,
      });
    }
    world.speakerSessions.set(id, sessions);
    return {
      id,
      event_id: eid,
      contact_id: account.contactIdStart + pIndex,
      ...personFields(p),
      bio: p.bio,
      gender: p.gender,
      profile_picture: p.picture,
      twitter_handle: p.twitter,
      cfs_speaker: r.chance(0.2),
      event_sort: i + 1,
      direct_link: `https://events.example.com/e/${eid}/speakers/${id}`,
      ...s,
    };
  });

  world.addStored('sponsors', account.index, eid, n.sponsors, (id, i) => {
    const r = rng('sponsors', id);
    event.sponsorIds.push(id);
    const company = COMPANIES[(i * 7 + eid) % COMPANIES.length]!;
    const rec: Rec = {
      id,
      event_id: eid,
      name: company,
      website: `https://www.${company.toLowerCase().replace(/[^a-z]/g, '')}.example.com`,
      description: r.chance(0.6) ? `${company} is a proud sponsor.` : '',
      logo_id: r.chance(0.8) ? 60000 + id : null,
      level: { ...SPONSOR_LEVELS[Math.min(3, Math.floor(i / 2))]! },
      webinar_url: '',
      video_url: r.chance(0.2) ? `https://video.example.com/${id}` : '',
      notes: '',
      direct_link: `https://events.example.com/e/${eid}/sponsors/${id}`,
      ...stamps(r),
    };
    rec[CUSTOM] = customValues(defs.sponsor, r);
    return rec;
  });

  world.addStored('registrant_types', account.index, eid, n.regTypes, (id, i) => {
    const r = rng('registrant_types', id);
    const name = REG_TYPES[i % REG_TYPES.length]!;
    event.regTypes.push({ id, name, cents: free ? 0 : REG_TYPE_CENTS[name]! });
    return {
      id,
      name,
      public_short_name: name,
      admin_short_name: name.slice(0, 3).toUpperCase(),
      description: '',
      capacity: r.pick([0, 100, 500, 1000]),
      sold_out_message: 'Sold out',
      min_group_size: 1,
      max_group_size: r.pick([1, 5, 10]),
      ...stamps(r),
    };
  });

  world.addStored('packages', account.index, eid, n.packages, (id, i) => {
    const r = rng('packages', id);
    const cents = free || i === 0 ? 0 : [0, 15000, 7500, 2500, 12000][i % 5]!;
    event.packages.push({ id, name: PACKAGES[i % PACKAGES.length]!, cents });
    return {
      id,
      event_id: eid,
      name: PACKAGES[i % PACKAGES.length]!,
      description: '',
      capacity: r.pick([0, 200, 500]),
      price: money(cents),
      sold_out_message: '',
      sort_order: i + 1,
      ...stamps(r),
    };
  });

  const discountIds: number[] = [];
  world.addStored('discount_codes', account.index, eid, n.discounts, (id, i) => {
    const r = rng('discount_codes', id);
    const percent = i % 3 !== 2;
    const code =
      i === 0 ? 'EARLYBIRD' : `${percent ? 'SAVE' : 'VIP'}${String(id).slice(-4)}${i % 5 === 4 ? '-ALT' : ''}`;
    event.discountCodes.push(code);
    discountIds.push(id);
    const all = r.chance(0.6);
    return {
      id,
      event_id: eid,
      parent_id: i % 5 === 4 ? discountIds[i - 4]! : null,
      code,
      type: percent ? 'percentage' : 'absolute',
      notes: '',
      absolute_discount: percent ? '0.00' : money(r.pick([2500, 5000, 10000])),
      percentage_discount: percent ? money(r.pick([1000, 1500, 2500, 10000])) : '0.00',
      apply_to_all: all ? 1 : 0,
      applicable_line_items: all ? [] : [{ object: 'reg_type', object_id: event.regTypes[0]?.id ?? null }],
      custom_fees: [],
      capacity: r.pick([0, 10, 50, 100]),
      sold_out_message: '',
      min_group_size: 1,
      registrants_per_use: 1,
      all_registrants_in_group: 0,
      visibility_id: r.int(1, 2),
      is_sold_out: r.chance(0.05) ? 1 : 0,
      ...stamps(r),
    };
  });

  world.addStored('event_questions', account.index, eid, n.questions, (id, i) => {
    const def = makeDef(id, questionTemplate(i));
    event.questions.push(def);
    return defRecord(def, i, eid);
  });

  const websiteIds = addCollectingIds('event_websites', n.websites, (id, i) => ({
    id,
    event_id: eid,
    name: i === 0 ? 'Main site' : 'Sponsor portal',
    url: `https://events.example.com/e/${eid}${i === 0 ? '' : '/sponsors'}`,
    status: event.plan.status === 'draft' ? 'draft' : 'published',
    is_default: i === 0,
  }));
  const pageNames = ['Home', 'Agenda', 'Speakers', 'Sponsors', 'Venue', 'FAQ', 'Register', 'Travel', 'Contact'];
  world.addStored('pages', account.index, eid, n.pages, (id, i) => ({
    id,
    event_id: eid,
    website_id: websiteIds[i % websiteIds.length]!,
    name: pageNames[i % pageNames.length]!,
    slug: pageNames[i % pageNames.length]!.toLowerCase(),
    type: i === 6 ? 'registration' : 'content',
    status: 'published',
    sort_order: i + 1,
  }));
  world.addStored('event_badges', account.index, eid, n.badges, (id, i) => ({
    id,
    event_id: eid,
    name: ['Attendee badge', 'Staff badge', 'Speaker badge'][i]!,
    type: i === 0 ? 'pdf' : 'thermal',
    width: 4,
    height: i === 0 ? 3 : 6.5,
  }));
  world.addStored('invitation_lists', account.index, eid, n.invitationLists, (id, i) => ({
    id,
    event_id: eid,
    name: `Invitees wave ${i + 1}`,
    invitee_count: 20 + ((id * 37) % 400),
  }));

  const cfsContactIds = addCollectingIds('cfs_contacts', n.cfsContacts, (id, i) => {
    const r = rng('cfs_contacts', id);
    const p = person(seed, account.index, hash4(seed, 12, eid, i) % contacts);
    return {
      id,
      event_id: eid,
      email: p.email,
      first_name: p.first,
      last_name: p.last,
      company: p.company,
      job_title: p.job,
      ...stamps(r),
    };
  });
  const submissionIds = addCollectingIds('cfs_submissions', Math.floor(cfsContactIds.length * 1.3), (id, i) => {
    const r = rng('cfs_submissions', id);
    return {
      id,
      event_id: eid,
      cfs_contact_id: cfsContactIds[i % cfsContactIds.length]!,
      title: `${r.pick(SESSION_SUBJECTS)} in practice`,
      abstract: 'We share what worked, what failed, and the numbers.',
      status: r.weighted(['submitted', 'accepted', 'rejected', 'withdrawn'], [40, 30, 25, 5]),
      track_id: trackIds[i % trackIds.length]!,
      ...stamps(r),
    };
  });
  world.addStored('cfs_reviews', account.index, eid, submissionIds.length * 2, (id, i) => {
    const r = rng('cfs_reviews', id);
    return {
      id,
      event_id: eid,
      cfs_submission_id: submissionIds[i >> 1]!,
      reviewer_email: `reviewer${(i % 4) + 1}@example.com`,
      score: r.int(1, 5),
      comments: r.chance(0.5) ? 'Strong proposal.' : '',
      ...stamps(r),
    };
  });
}
