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
  const checksum = crc32(content);
  const DOS_TIME = 0;
  const DOS_DATE = (0 << 9) | (1 << 5) | 1;

  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(10, 4); // version needed: 1.0, stored
  local.writeUInt16LE(0x0800, 6); // UTF-8 names
  local.writeUInt16LE(0, 8); // stored
  local.writeUInt16LE(DOS_TIME, 10);
  local.writeUInt16LE(DOS_DATE, 12);
  local.writeUInt32LE(checksum, 14);
  local.writeUInt32LE(content.length, 18);
  local.writeUInt32LE(content.length, 22);
  local.writeUInt16LE(fileName.length, 26);
  local.writeUInt16LE(0, 28);

  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4); // made by
  central.writeUInt16LE(10, 6);
  central.writeUInt16LE(0x0800, 8);
  central.writeUInt16LE(0, 10);
  central.writeUInt16LE(DOS_TIME, 12);
  central.writeUInt16LE(DOS_DATE, 14);
  central.writeUInt32LE(checksum, 16);
  central.writeUInt32LE(content.length, 20);
  central.writeUInt32LE(content.length, 24);
  central.writeUInt16LE(fileName.length, 28);
  // extra, comment, disk, internal and external attributes, local header offset: all 0
  const centralOffset = local.length + fileName.length + content.length;

  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + fileName.length, 12);
  end.writeUInt32LE(centralOffset, 16);

  return Buffer.concat([local, fileName, content, central, fileName, end]);
}

export function launcherJar(mainClass: string, classPath: string[]): Buffer {
  return storedZip('META-INF/MANIFEST.MF', Buffer.from(launcherManifest(mainClass, classPath), 'utf8'));
}
