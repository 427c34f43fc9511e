/** Word lists for plausible records. Names include non-ASCII letters and apostrophes on purpose. */

/** The `{id, value}` options of a choice field, ids numbered from 1 in the order given. */
function choices(...values: string[]): readonly { readonly id: number; readonly value: string }[] {
  return values.map((value, i) => ({ id: i + 1, value }));
}

export const FIRST_NAMES = [
  'Olivia',
  'Liam',
  'Emma',
  'Noah',
  'Amelia',
  'Oliver',
  'Sophia',
  'Elijah',
  'Charlotte',
  'James',
  'Ava',
  'Lucas',
  'Mia',
  'Mateo',
  'Isabella',
  'Ethan',
  'Zoë',
  'José',
  'Chloé',
  'Søren',
  'Aiko',
  'Hiroshi',
  'Priya',
  'Arjun',
  'Fatima',
  'Omar',
  'Ngozi',
  'Kwame',
  'Ingrid',
  'Lars',
  'María',
  'Diego',
  'Anaïs',
  'François',
  'Wei',
  'Mei',
  'Siobhán',
  'Seán',
  'Björn',
  'Zoltán',
  'Jürgen',
  'Renée',
  'Dmitri',
  'Yasmin',
  'Tomás',
  'Leilani',
  'Rafael',
  'Grace',
  'Henry',
  'Nora',
] as const;

export const LAST_NAMES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'García',
  'Miller',
  'Davis',
  'Rodríguez',
  'Martínez',
  "O'Brien",
  "D'Angelo",
  'Müller',
  'Schmidt',
  'Nguyen',
  'Kim',
  'Tanaka',
  'Suzuki',
  'Patel',
  'Sharma',
  'Okafor',
  'Mensah',
  'Andersson',
  'Johansson',
  'Kowalski',
  'Nowak',
  'Rossi',
  'Bianchi',
  'Dubois',
  'Lefèvre',
  'Van der Berg',
  'Ó Súilleabháin',
  'MacDonald',
  'Fernández',
  'Silva',
  'Santos',
  'Cohen',
  'Levi',
  'Haddad',
  'Khan',
  'Ivanova',
  'Petrov',
  'Hansen',
  'Jensen',
  'Wang',
  'Li',
  'Zhang',
  'Chen',
  'Lee',
  'Walker',
] as const;

export const PREFIXES = ['', '', '', 'Mr.', 'Ms.', 'Dr.', 'Prof.', 'Mx.'] as const;
export const SUFFIXES = ['', '', '', '', '', '', 'Jr.', 'PhD', 'III'] as const;

export const COMPANIES = [
  'Acme Corp',
  'Globex',
  'Initech',
  'Umbrella Health',
  'Stark Industries',
  'Wayne Enterprises',
  'Hooli',
  'Pied Piper',
  'Vandelay Industries',
  'Soylent & Co.',
  'Tyrell Systems',
  'Cyberdyne',
  'Wonka Confections',
  'Nakatomi Trading',
  'Oceanic Airlines',
  'Massive Dynamic',
  'Aperture Labs',
  'Black Mesa Research',
  'Monsters, Inc.',
  'Blue Sun',
  'Gringotts',
  'Los Pollos Hermanos',
  'Prestige Worldwide',
  'Dunder Mifflin',
  'Sterling Cooper',
  'Bluth Company',
  'Rekall',
  'Virtucon',
  'Zorg Industries',
  'Oscorp',
] as const;

export const JOB_TITLES = [
  'CEO',
  'CTO',
  'Head of Marketing',
  'Event Manager',
  'Data Engineer',
  'Product Manager',
  'Software Engineer',
  'Sales Director',
  'Research Scientist',
  'Account Executive',
  'Designer',
  'Analyst',
  'Procurement Lead',
  'VP Operations',
  'Student',
  'Consultant',
  'Nurse Practitioner',
  'Professor',
  'Founder',
  '',
] as const;

export const GENDERS = choices('Female', 'Male', 'Non-binary', 'Prefer not to say');

export const LANGUAGES = ['en', 'en', 'en', 'fr', 'de', 'es', 'ja', 'pt'] as const;

export const CITIES = [
  { city: 'New York', state: 'NY', country: 'US', zip: '10001' },
  { city: 'San Francisco', state: 'CA', country: 'US', zip: '94105' },
  { city: 'Austin', state: 'TX', country: 'US', zip: '73301' },
  { city: 'Chicago', state: 'IL', country: 'US', zip: '60601' },
  { city: 'Toronto', state: 'ON', country: 'CA', zip: 'M5H 2N2' },
  { city: 'London', state: '', country: 'GB', zip: 'EC1A 1BB' },
  { city: 'Berlin', state: '', country: 'DE', zip: '10115' },
  { city: 'Paris', state: '', country: 'FR', zip: '75001' },
  { city: 'Tokyo', state: '', country: 'JP', zip: '100-0001' },
  { city: 'Sydney', state: 'NSW', country: 'AU', zip: '2000' },
  { city: 'São Paulo', state: 'SP', country: 'BR', zip: '01000-000' },
  { city: 'Mumbai', state: 'MH', country: 'IN', zip: '400001' },
] as const;

export const STREETS = [
  'Main St',
  'Market Street',
  'Elm Avenue',
  'Rue de Rivoli',
  'Friedrichstraße',
  'High Street',
] as const;

export const EVENT_ADJECTIVES = [
  'Global',
  'Annual',
  'Future',
  'Open',
  'Digital',
  'Northern',
  'Pacific',
  'Summer',
] as const;
export const EVENT_TOPICS = [
  'Data',
  'Health',
  'Cloud',
  'Marketing',
  'Security',
  'Finance',
  'Design',
  'Climate',
  'AI',
  'Retail',
  'Logistics',
] as const;
export const EVENT_KINDS = ['Summit', 'Conference', 'Forum', 'Expo', 'Symposium', 'Meetup', 'Workshop'] as const;

export const TIMEZONES = [
  'America/New_York',
  'Europe/London',
  'Europe/Berlin',
  'Asia/Tokyo',
  'Australia/Sydney',
  'America/Los_Angeles',
  'UTC',
  'Asia/Kolkata',
] as const;

export const CURRENCY_BY_ZONE: Readonly<Record<string, string>> = {
  'America/New_York': 'USD',
  'America/Los_Angeles': 'USD',
  'Europe/London': 'GBP',
  'Europe/Berlin': 'EUR',
  'Asia/Tokyo': 'JPY',
  'Australia/Sydney': 'AUD',
  UTC: 'USD',
  'Asia/Kolkata': 'INR',
};

export const SESSION_WORDS = [
  'Keynote',
  'Panel',
  'Workshop',
  'Fireside Chat',
  'Lightning Talks',
  'Deep Dive',
  'Roundtable',
  'Lab',
  'Networking Lunch',
  'Closing Remarks',
] as const;
export const SESSION_SUBJECTS = [
  'Scaling Pipelines',
  'Privacy by Design',
  'The Next Decade',
  'Customer Journeys',
  'Zero Trust',
  'Green Ops',
  'Hiring Well',
  'Pricing Strategy',
  'Edge Computing',
  'Accessible Events',
  'Café Culture & Teams',
] as const;

export const TRACK_NAMES = ['Business', 'Technical', 'Leadership', 'Community', 'Product', 'Research'] as const;
export const TRACK_COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b'] as const;
export const ROOMS = [
  'Hall A',
  'Hall B',
  'Room 101',
  'Room 102',
  'Auditorium',
  'Salle Étoile',
  'Terrace',
  'Lab 3',
] as const;

export const SPONSOR_LEVELS = choices('Platinum', 'Gold', 'Silver', 'Bronze');

export const REG_TYPES = ['Attendee', 'VIP', 'Speaker', 'Press', 'Exhibitor', 'Student', 'Staff'] as const;
export const PACKAGES = ['Standard Pass', 'Full Access', 'Workshop Bundle', 'Virtual Pass', 'Gala Dinner'] as const;
