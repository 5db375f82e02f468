// One journal record framed on its own, as a group frames its members one after another
// (lib/store/codec.ts FrameBuffer): what the store tests write and compare byte for byte.
import { FRAME_HEADER_BYTES, FrameBuffer, type Crc32c, type JournalRecord } from '../../lib/store/codec.js';

export function recordFrame(crc: Crc32c, record: JournalRecord): Buffer {
  const frames = new FrameBuffer(FRAME_HEADER_BYTES);
  frames.appendRecord(crc, record);
  return frames.contents();
}
