// The voice chunk's entry (lazy: loaded by the first voice note, /voice reply or `pinclaw voice`).
export { hear, SILENCE_DB, type Heard } from './hear.js';
export { speak, NotSetUp, type Spoken } from './speak.js';
export { transcribeVoiceNote, type SavedVoiceNote, type VoiceOutcome } from './voice-note.js';
export { hearVoiceNotes } from './burst.js';
