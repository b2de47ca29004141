// Texts for the local embedder's tests and benchmark: edge cases, slices of the tokenizer's mixed
// corpus (scripts, emoji, code, invalid surrogates), vocabulary words with typos, and a small
// retrieval set of personal notes with queries that ask for them in other words.
import { buildCorpus } from './tokenizer-corpus.js';
import { prng } from './prng.js';

export const EDGE_TEXTS: string[] = [
  '', ' ', '\n\t', '...', '!!! ??? ---', 'a', 'I', '5', '42', '3.14159', '2024-05-17', '+49 170 1234567',
  'the', 'The THE tHe', 'temperature', 'temprature', 'tempreature', 'Temperatur', 'thermostat thermostst',
  "can't won't don't it's we're they'll I've he'd I'm", "rock'n'roll o'clock", 'wi-fi Wi-Fi e-mail mid-1990s',
  'my_snake_case_identifier __init__ foo_bar_baz', 'a-b-c-d-e', '--flag -x', 'kubernetes zigbee2mqtt homebrige pinclaw',
  'Café naïve Zürich São Paulo Ærøskøbing façade', 'ǅemal ß straße ΣΊΣΥΦΟΣ', 'ﬁnance ＦＵＬＬＷＩＤＴＨ',
  '東京は日本の首都です', '한국어 텍스트', 'Привет, мир! Как дела?', 'مرحبا بالعالم', 'नमस्ते दुनिया',
  '🙂🙃 emoji 👨‍👩‍👧 family', 'lone \ud800 high and \udc00 low surrogates', '\u0000 nul and \u200b zero width',
  'x'.repeat(200), 'supercalifragilisticexpialidocious'.repeat(3), 'word '.repeat(2000),
  'The heating is too warm in the living room at night.', 'Turn the thermostat down in the evening!',
];

/** Deterministic texts of every kind and length (0 to ~3000 characters). */
export function embedderTexts(seed = 7, count = 400): string[] {
  const corpus = buildCorpus({ seed, minBytes: 300_000 }).text;
  const r = prng(seed);
  const out = [...EDGE_TEXTS];
  while (out.length < count) {
    const len = Math.floor(r() ** 2 * 3000);
    const at = Math.floor(r() * Math.max(1, corpus.length - len));
    out.push(corpus.slice(at, at + len));
  }
  return out;
}

/** [memory, query]: the query asks for the memory in other words. */
export const RETRIEVAL_PAIRS: [string, string][] = [
  ['The heating is too warm in the living room at night', 'turn the thermostat down in the evening'],
  ['Buy milk, eggs and bread on the way home tomorrow', 'groceries to pick up'],
  ['My sister Anna has her birthday on the 14th of March', 'when is my sibling born'],
  ['The wifi password for the guest network is on the fridge', 'where is the wireless key for visitors'],
  ['Dentist appointment next Tuesday at 9 am', 'when do I see the doctor for my teeth'],
  ['The car needs new tyres before winter', 'vehicle wheels must be replaced before the cold season'],
  ['I prefer my coffee black without sugar', 'how do I like to drink espresso'],
  ['The garden sprinkler runs every morning at six', 'irrigation schedule for the lawn'],
  ['Paid the electricity bill for October', 'power invoice payment'],
  ['The kids have swimming lessons on Saturday afternoons', 'when do the children go to the pool'],
  ['Our flight to Lisbon leaves on Friday evening', 'travel plans to Portugal by plane'],
  ['The basement sensor reported high humidity again', 'moisture in the cellar'],
  ['Call the plumber about the leaking kitchen tap', 'faucet is dripping, need a repair'],
  ['Mom is allergic to peanuts and shellfish', 'what food can my mother not eat'],
  ['The router reboots itself every night around midnight', 'internet modem restarts at night'],
  ['I want to run a half marathon in spring', 'my fitness goal for jogging'],
  ['The dog must get his vaccination in June', 'vet shot for the puppy'],
  ['Remember to water the tomato plants on the balcony', 'vegetables on the terrace need watering'],
  ['The front door lock battery is almost empty', 'the smart lock needs a new battery'],
  ['Movie night with friends on Sunday, bring popcorn', 'weekend film evening snacks'],
  ['The solar panels produced 12 kWh yesterday', 'how much energy did the photovoltaic system generate'],
  ['Cancel the gym membership before the end of the month', 'stop the fitness club subscription'],
  ['The meeting with the landlord is about the rent increase', 'discussion with the apartment owner about higher rent'],
  ['I am learning Spanish with an app every morning', 'language study routine'],
  ['The washing machine makes a loud noise when spinning', 'laundry appliance is noisy'],
  ['Grandpa likes to read detective novels', 'what books does my grandfather enjoy'],
  ['Take the recycling bins out on Wednesday night', 'when is garbage collection'],
  ['The office printer is out of toner', 'cartridge for the printing machine is empty'],
  ['My passport expires in August next year', 'when must I renew my travel document'],
  ['The bedroom window sensor shows it is open', 'is the window in the sleeping room closed'],
  ['Book a table at the Italian restaurant for our anniversary', 'dinner reservation for pasta on our wedding day'],
  ['The raspberry pi in the garage measures the temperature', 'which board monitors how hot the garage is'],
  ['Insurance for the house renews in January', 'home policy renewal date'],
  ['The cat food is running low', 'buy more pet food for the kitten'],
  ['Sarah recommended a great podcast about history', 'an audio show about the past that a friend suggested'],
  ['The bathroom light flickers when switched on', 'lamp in the shower room blinks'],
  ['I have a doctor visit for my back pain on Monday', 'appointment about my spine hurting'],
  ['We are saving money for a new kitchen', 'budget plan to renovate where we cook'],
  ['The train to work was delayed by twenty minutes', 'my commute was late this morning'],
  ['Turn off the lights when nobody is home', 'save electricity when the house is empty'],
  ['The password manager backup is on the USB stick', 'where are my saved credentials stored offline'],
  ['The baby sleeps best with white noise', 'what helps the infant fall asleep'],
  ['Renew the parking permit at city hall', 'get a new car permit from the municipality'],
  ['The air quality sensor detected high carbon dioxide in the office', 'co2 levels in the workspace are bad'],
  ['My favourite band is playing a concert in July', 'music gig of the group I love'],
  ['The neighbours are on holiday until the 20th', 'people next door are away on vacation'],
  ['Order a birthday cake with chocolate frosting', 'sweet dessert for the party'],
  ['The heat pump uses too much power in winter', 'heating system consumes lots of electricity when it is cold'],
  ['I need to finish the tax return by May', 'deadline for filing taxes'],
  ['The fish tank filter needs cleaning every two weeks', 'aquarium maintenance schedule'],
];

/**
 * [anchor, paraphrase, unrelated]: the paraphrase must score higher. (Word vectors miss what needs
 * inference: "the fridge is empty" scores closer to "the car is parked outside" than to "we need to
 * buy food", so such pairs are not here.)
 */
export const PARAPHRASE_TRIPLES: [string, string, string][] = [
  ['the heating is too warm', 'turn the thermostat down', 'buy milk tomorrow'],
  ['my phone battery is dead', 'the smartphone needs charging', 'the garden needs watering'],
  ['the server is down', 'the website is unreachable', 'the soup is too salty'],
  ['I feel sick today', 'I am ill and stay in bed', 'the printer is out of paper'],
  ['book a flight to Berlin', 'reserve plane tickets to Germany', 'fix the kitchen sink'],
  ['the dog barks at night', 'the puppy is noisy after dark', 'pay the electricity bill'],
  ['it is raining heavily', 'there is a storm with lots of rain', 'my keyboard is broken'],
  ['the temperature in the greenhouse is rising', 'plants are getting too hot', 'the bank transfer failed'],
];
