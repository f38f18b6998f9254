import HybridInference
import Synchronization

/// What a contract snippet printed, for the tests that run it verbatim.
///
/// A snippet test's file declares its own `print`, which shadows the
/// standard library's there and hands each line to `current`, a task-local
/// the test sets; the snippet's text stays byte for byte as written, and the
/// test asserts on what it printed instead of burying the log in it.
final class SnippetOutput: Sendable {
  /// The output the snippet running in this task prints to.
  @TaskLocal static var current: SnippetOutput?

  /// One `print`: its items as `print` writes them, and the item itself
  /// when it printed one JSON value (a structured snapshot).
  struct Line: Sendable {
    var text: String
    var json: JSONValue?
  }

  private let stopAfter: Int?
  /// Behind a lock: the snippet prints from its task, the test reads from its own.
  private let recorded = Mutex<[Line]>([])

  /// An output that cancels the printing task at its `stopAfter`th line, the
  /// way an app stops reading a stream: an unbounded loop in the snippet then
  /// ends with `CancellationError` at its next element.
  init(stoppingAfter stopAfter: Int? = nil) {
    self.stopAfter = stopAfter
  }

  /// Every line so far.
  var lines: [Line] { recorded.withLock { $0 } }

  /// Records one `print` of `items`.
  func record(_ items: [Any]) {
    let line = Line(
      text: items.map { "\($0)" }.joined(separator: " "), json: items.count == 1 ? items[0] as? JSONValue : nil)
    let count = recorded.withLock { lines in
      lines.append(line)
      return lines.count
    }
    if count == stopAfter { withUnsafeCurrentTask { $0?.cancel() } }
  }
}
