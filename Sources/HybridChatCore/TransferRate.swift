/// How fast a download goes, from timed readings of its byte count, and so
/// how long it has left.
///
/// The rate is the bytes moved over the last `window` (or since the first
/// reading, when the download is younger): recent enough to follow a
/// connection that slows down, long enough not to jump with each chunk. A
/// resumed download's first reading already counts the bytes it found on
/// disk; only what moved after it counts towards the rate. Times are given,
/// not read from a clock, so the arithmetic is tested without waiting.
public struct TransferRate: Sendable, Hashable {
  /// One reading: the bytes done at a time since the download started.
  struct Reading: Sendable, Hashable {
    var time: Duration
    var bytes: Int64
  }

  /// How far back the rate looks.
  public static let window = Duration.seconds(5)
  /// The most readings kept: a download reports a few times a second, and
  /// a caller that reports more often must not grow the list without bound.
  static let maximumReadings = 256

  /// The readings the rate is taken over, oldest first.
  private(set) var readings: [Reading] = []

  /// No readings yet.
  public init() {}

  /// Records that `bytes` were done at `time` (since the download started).
  /// A reading earlier than the last one is ignored.
  public mutating func record(_ bytes: Int64, at time: Duration) {
    if let last = readings.last, time < last.time { return }
    readings.append(Reading(time: time, bytes: bytes))
    // Keep one reading at or before the window's start, so the window is spanned.
    while readings.count > 2, readings[1].time <= time - Self.window { readings.removeFirst() }
    if readings.count > Self.maximumReadings { readings.removeFirst(readings.count - Self.maximumReadings) }
  }

  /// Bytes per second over the window; nil until two readings lie apart in time.
  public var bytesPerSecond: Double? {
    guard let first = readings.first, let last = readings.last else { return nil }
    let seconds = Self.seconds(last.time - first.time)
    guard seconds > 0 else { return nil }
    return Double(max(0, last.bytes - first.bytes)) / seconds
  }

  /// Seconds until `total` bytes are done at the current rate; nil when the
  /// total or the rate is unknown, or the rate is zero.
  public func secondsLeft(total: Int64?) -> Double? {
    guard let total, let done = readings.last?.bytes, let rate = bytesPerSecond, rate > 0 else { return nil }
    return Double(max(0, total - done)) / rate
  }

  static func seconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
  }
}
