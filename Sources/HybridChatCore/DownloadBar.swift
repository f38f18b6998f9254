import HybridInferenceDownload

/// The text of a download's progress on a terminal:
/// `Downloading smollm2.gguf [=====>      ]  45%  44.1/98.0 MB  12.3 MB/s  4 s left`.
///
/// Pure rendering, next to `ProgressBar`, whose bar it draws: the caller
/// gives the progress and the rate (`TransferRate`), and draws the line
/// only on a terminal. A size not known yet shows the bytes and the rate
/// without a bar; a rate not known yet, or zero (a stalled connection),
/// shows no time left rather than an endless one.
public struct DownloadBar: Sendable, Hashable {
  /// The bar and its label (`Downloading smollm2.gguf`).
  public var bar: ProgressBar

  /// A bar of `width` cells after `Downloading <fileName>`.
  public init(fileName: String, width: Int = 30) {
    bar = ProgressBar(label: "Downloading \(fileName)", width: width)
  }

  /// The line for `progress` at `bytesPerSecond` (nil: not known yet),
  /// starting with a carriage return and clearing the line, like
  /// `ProgressBar.line`.
  public func line(_ progress: DownloadProgress, bytesPerSecond: Double?) -> String {
    var fields: [String]
    if let total = progress.totalBytes, total > 0 {
      fields = [bar.line(progress.fractionCompleted), ByteCount.text(progress.completedBytes, of: total)]
    } else {
      fields = [bar.erase + bar.label, ByteCount.text(progress.completedBytes)]
    }
    if let bytesPerSecond {
      fields.append(ByteCount.rate(bytesPerSecond))
      if let total = progress.totalBytes, bytesPerSecond > 0 {
        let seconds = Double(max(0, total - progress.completedBytes)) / bytesPerSecond
        fields.append(Self.timeText(seconds) + " left")
      }
    }
    return fields.joined(separator: "  ")
  }

  /// What erases the line.
  public var erase: String { bar.erase }

  /// `seconds` rounded up, in at most two units: `4 s`, `2 min 5 s`, `3 h 12 min`.
  public static func timeText(_ seconds: Double) -> String {
    // A day and more is shown in hours: a rate that low is a stall, not a plan.
    guard seconds.isFinite, seconds < 1e9 else { return "a long time" }
    let whole = Int(max(0, seconds).rounded(.up))
    if whole < 60 { return "\(whole) s" }
    if whole < 3600 { return whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s" }
    let minutes = (whole % 3600) / 60
    return minutes == 0 ? "\(whole / 3600) h" : "\(whole / 3600) h \(minutes) min"
  }

  /// The line a log gets when a download ends (stderr not a terminal):
  /// `downloaded smollm2.gguf: 98.0 MB in 8.0 s (12.3 MB/s)`; `moved` is
  /// what this run fetched (a resumed file had the rest).
  public static func summary(fileName: String, size: Int64, moved: Int64, elapsed duration: Duration) -> String {
    let elapsed = max(0, TransferRate.seconds(duration))
    var text = "downloaded \(fileName): \(ByteCount.text(size))"
    if moved < size { text += " (\(ByteCount.text(moved)) of it now)" }
    text += " in " + (elapsed < 10 ? String(Double(Int((elapsed * 10).rounded())) / 10) + " s" : timeText(elapsed))
    if elapsed > 0 { text += " (\(ByteCount.rate(Double(max(0, moved)) / elapsed)))" }
    return text
  }
}
