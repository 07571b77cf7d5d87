// A jar of one file, META-INF/MANIFEST.MF, that `java -jar` can start: it names the main class and puts the real
// jars on the class path. Written here, not with the JDK's `jar` tool, because a Java runtime without a JDK has no
// such tool. A jar is a zip; one stored (uncompressed) entry is all this needs.

import { pathToFileURL } from 'node:url';
import { crc32 } from 'node:zlib';

/** A manifest line is at most 72 bytes; longer values continue on lines that start with one space. */
export function manifestLine(name: string, value: string): string {
  const bytes = Buffer.from(`${name}: ${value}`, 'utf8');
  const lines = [bytes.subarray(0, 72).toString('utf8')];
  for (let offset = 72; offset < bytes.length; offset += 71) {
    lines.push(` ${bytes.subarray(offset, offset + 71).toString('utf8')}`);
  }
  return lines.map((line) => `${line}\r\n`).join('');
}

export function launcherManifest(mainClass: string, classPath: string[]): string {
  return (
    manifestLine('Manifest-Version', '1.0') +
    manifestLine('Main-Class', mainClass) +
    manifestLine('Class-Path', classPath.map((jar) => pathToFileURL(jar).href).join(' ')) +
    '\r\n'
  );
}

/** The bytes of a zip with one stored entry. DOS date 1980-01-01 00:00, so the same input gives the same file. */
export function storedZip(name: string, content: Buffer): Buffer {
  const fileName = Buffer.from(name, 'utf8');
  // What the local header and the central directory both say of the entry: version needed 1.0, UTF-8 names,
  // stored, time 00:00, date 1980-01-01, CRC-32, both sizes, the name's length.
  const entry = Buffer.alloc(26);
  entry.writeUInt16LE(10, 0);
  entry.writeUInt16LE(0x0800, 2);
  entry.writeUInt16LE((1 << 5) | 1, 8);
  entry.writeUInt32LE(crc32(content), 10);
  entry.writeUInt32LE(content.length, 14);
  entry.writeUInt32LE(content.length, 18);
  entry.writeUInt16LE(fileName.length, 22);
  const u32 = (value: number) => Buffer.from(Uint32Array.of(value).buffer);
  const local = Buffer.concat([u32(0x04034b50), entry, fileName, content]);
  // Central directory: made by 2.0, the entry, then comment, disk, attributes and the local header's offset, all 0.
  const central = Buffer.concat([u32(0x02014b50), Buffer.from([20, 0]), entry, Buffer.alloc(14), fileName]);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length, 12);
  end.writeUInt32LE(local.length, 16);
  return Buffer.concat([local, central, end]);
}

export function launcherJar(mainClass: string, classPath: string[]): Buffer {
  return storedZip('META-INF/MANIFEST.MF', Buffer.from(launcherManifest(mainClass, classPath), 'utf8'));
}
