/// A number of bytes as a person reads it: `512 B`, `647.2 kB`, `44.1 MB`.
///
/// Decimal units (1 kB = 1000 B), the ones the Hugging Face hub and disk
/// makers use, so a size here matches the one on the model's page.
public enum ByteCount {
  /// The units from bytes up, each 1000 times the one before.
  private static let units = ["B", "kB", "MB", "GB", "TB", "PB"]

  /// The unit `bytes` is best shown in, and its size in bytes.
  static func unit(for bytes: Int64) -> (name: String, size: Double) {
    var size: Int64 = 1
    var index = 0
    // Bounded by the units: an Int64 is at most 9.2 EB.
    while index + 1 < units.count, bytes / size >= 1000 {
      size *= 1000
      index += 1
    }
    return (units[index], Double(size))
  }

  /// `bytes` in its own unit: whole bytes, else one decimal.
  public static func text(_ bytes: Int64) -> String {
    let unit = unit(for: bytes)
    return number(bytes, unit) + " " + unit.name
  }

  /// `done` of `total` in the unit of `total`: `44.1/98.0 MB`.
  public static func text(_ done: Int64, of total: Int64) -> String {
    let unit = unit(for: total)
    return number(done, unit) + "/" + number(total, unit) + " " + unit.name
  }

  /// A transfer rate, `12.3 MB/s`; a negative or non-finite rate reads 0.
  public static func rate(_ bytesPerSecond: Double) -> String {
    let bytes = bytesPerSecond.isFinite && bytesPerSecond > 0 ? Int64(min(bytesPerSecond, 1e18)) : 0
    return text(bytes) + "/s"
  }

  private static func number(_ bytes: Int64, _ unit: (name: String, size: Double)) -> String {
    let bytes = max(0, bytes)
    guard unit.size > 1 else { return String(bytes) }
    let tenths = (Double(bytes) / unit.size * 10).rounded()
    return "\(Int64(tenths) / 10).\(Int64(tenths) % 10)"
  }
}
