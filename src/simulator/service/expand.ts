import { hash4, Rng, tag } from '../core/random.js';
import type { Json, Rec } from '../core/record.js';
import { address } from '../data/people.js';
import type { World } from '../data/world.js';
import type { Partition } from '../store/partition.js';
import { findAny, liveRecords } from './lookup.js';

/** Registrant counts per discount code, cached per event until its registrants change. */
const discountCounts = new WeakMap<Partition, { version: number; counts: Map<string, number> }>();

function registrantCountOf(world: World, eventId: number, code: string): number {
  const part = world.table('registrants').scope(eventId);
  if (!part) return 0;
  let cached = discountCounts.get(part);
  if (!cached || cached.version !== part.version) {
    const counts = new Map<string, number>();
    for (const pos of part.positions()) {
      const c = part.record(pos).discount_code;
      if (typeof c === 'string' && c !== '') counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    cached = { version: part.version, counts };
    discountCounts.set(part, cached);
  }
  return cached.counts.get(code) ?? 0;
}

function pickFields(rec: Rec | undefined, keys: string[]): Json {
  if (!rec) return null;
  const out: Rec = {};
  for (const k of keys) out[k] = rec[k] ?? null;
  return out;
}

function speakersOfSession(world: World, eventId: number, sessionId: number): Json[] {
  return liveRecords(world.table('speakers').scope(eventId))
    .filter((s) => world.speakerSessions.get(s.id as number)?.has(sessionId))
    .map((s) => pickFields(s, ['id', 'first_name', 'last_name']));
}

/** The value of one `expand` member for one record. Only called with values the stream allows. */
export function expandValue(world: World, stream: string, name: string, rec: Rec): Json {
  const id = rec.id as number;
  const eventId = (rec.event_id as number | undefined) ?? id;
  switch (`${stream}.${name}`) {
    case 'registrants.homeAddress':
    case 'contacts.homeAddress':
      return address(world.seed, id, 1);
    case 'registrants.workAddress':
    case 'contacts.workAddress':
      return address(world.seed, id, 2);
    case 'registrants.billingAddress':
    case 'contacts.billingAddress':
      return address(world.seed, id, 3);
    case 'registrants.emailHistory': {
      const r = new Rng(hash4(world.seed, tag('email'), id));
      const count = r.int(0, 3);
      const subjects = ['Your registration is confirmed', 'Know before you go', 'Your receipt', 'Session changes'];
      const base = typeof rec.created_at === 'string' ? rec.created_at : '';
      return Array.from({ length: count }, (_, k) => ({
        id: id * 10 + k,
        subject: subjects[k % subjects.length]!,
        sent_at: base,
        status: r.pick(['delivered', 'delivered', 'opened', 'bounced']),
      }));
    }
    case 'events.folder':
      return typeof rec.folder_id === 'number'
        ? pickFields(findAny(world, 'event_folders', rec.folder_id)?.rec, ['id', 'name'])
        : null;
    case 'events.location': {
      const a = address(world.seed, id, 4) as Record<string, Json>;
      return { name: 'Convention Centre', ...a };
    }
    case 'events.sessions':
      return liveRecords(world.table('sessions').scope(id)).map((s) =>
        pickFields(s, ['id', 'name', 'date', 'start_time', 'end_time']),
      );
    case 'events.sponsors':
      return liveRecords(world.table('sponsors').scope(id)).map((s) => pickFields(s, ['id', 'name', 'level']));
    case 'events.speakers':
      return liveRecords(world.table('speakers').scope(id)).map((s) =>
        pickFields(s, ['id', 'first_name', 'last_name']),
      );
    case 'events.translations':
      return id % 2 === 0 ? [{ language: 'fr', name: `${String(rec.name)} (FR)` }] : [];
    case 'sessions.speakers':
      return speakersOfSession(world, eventId, id);
    case 'sessions.location':
      return typeof rec.location_id === 'number'
        ? pickFields(findAny(world, 'session_locations', rec.location_id)?.rec, ['id', 'name', 'building', 'floor'])
        : null;
    case 'sessions.track':
      return typeof rec.track_id === 'number'
        ? pickFields(findAny(world, 'tracks', rec.track_id)?.rec, ['id', 'name', 'color'])
        : null;
    case 'speakers.sessions': {
      const links = world.speakerSessions.get(id);
      if (!links) return [];
      const out: Json[] = [];
      for (const [sessionId, at] of [...links].sort((a, b) => a[0] - b[0])) {
        const s = findAny(world, 'sessions', sessionId);
        if (s)
          out.push({ id: sessionId, name: s.rec.name ?? null, created_at: at.created_at, updated_at: at.updated_at });
      }
      return out;
    }
    case 'discount_codes.alternates':
      return liveRecords(world.table('discount_codes').scope(eventId))
        .filter((d) => d.parent_id === id)
        .map((d) => pickFields(d, ['id', 'code']));
    case 'discount_codes.autopopulate':
      return { enabled: id % 3 === 0, url_parameter: 'promo' };
    case 'discount_codes.registrantCount':
      return registrantCountOf(world, eventId, String(rec.code));
    case 'discount_codes.reservedCount':
      return hash4(world.seed, id) % 5;
    default:
      return null;
  }
}
