/// The text of a terminal progress bar: `Loading model.gguf [=====>     ]  45%`.
///
/// Pure rendering; the executable decides where and whether to draw it (only
/// on a terminal: a log file should not fill with carriage returns).
public struct ProgressBar: Sendable, Hashable {
  /// What is in progress (`Loading SmolLM2-135M-Instruct.Q4_1.gguf`).
  public var label: String
  /// The number of cells between the brackets.
  public var width: Int

  /// A bar of `width` cells after `label`.
  public init(label: String, width: Int = 30) {
    self.label = label
    self.width = max(1, width)
  }

  /// The whole percentage for `fraction`, clamped to 0...100.
  public static func percent(_ fraction: Double) -> Int {
    guard fraction.isFinite else { return 0 }
    return Int((min(1, max(0, fraction)) * 100).rounded(.down))
  }

  /// The line for `fraction` (0...1), starting with a carriage return and
  /// clearing the rest of the line, so each draw replaces the last.
  public func line(_ fraction: Double) -> String {
    let percent = Self.percent(fraction)
    let filled = width * percent / 100
    let head = filled < width && filled > 0 ? ">" : ""
    let bar =
      String(repeating: "=", count: max(0, filled - head.count)) + head
      + String(repeating: " ", count: width - filled)
    let number = String(percent)
    let padded = String(repeating: " ", count: max(0, 3 - number.count)) + number
    return "\r\(Self.clearLine)\(label) [\(bar)] \(padded)%"
  }

  /// What erases the bar when loading is done.
  public var erase: String { "\r\(Self.clearLine)" }

  /// ANSI "erase in line".
  static let clearLine = "\u{1B}[2K"
}
