import Foundation

/// Text the kernel makes on read: /proc and /sys files.
///
/// The kernel reports these files' size as 0 and makes their text as it is
/// read; Foundation's `String(contentsOfFile:)` reads only about the first
/// 4 KiB of them, so a reader would find nothing past the first page of
/// /proc/self/maps, which runs to tens of KiB. This reads until the kernel says
/// the end, up to a bound: a host with thousands of mappings or CPUs must not
/// make one read grow without limit.
enum KernelFile {
  /// The most bytes read from one file: /proc/self/maps of a large process
  /// is a few hundred KiB.
  static let limit = 8 << 20

  /// The file's text; nil when it cannot be opened or read. Past `limit`
  /// bytes the text is cut (at a line boundary when there is one) rather
  /// than refused, since every reader here scans lines.
  static func read(_ path: String, limit: Int = limit) -> String? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    var bytes = Data()
    while bytes.count < limit {
      let chunk: Data?
      do {
        chunk = try handle.read(upToCount: min(64 << 10, limit - bytes.count))
      } catch {
        return nil  // a read error: a directory, a file gone
      }
      // nil or empty: the end.
      guard let chunk, !chunk.isEmpty else { return String(decoding: bytes, as: UTF8.self) }
      bytes.append(chunk)
    }
    if let lastNewline = bytes.lastIndex(of: UInt8(ascii: "\n")) { bytes = bytes[...lastNewline] }
    return String(decoding: bytes, as: UTF8.self)
  }
}
