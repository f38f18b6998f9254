import Synchronization

/// What one render may spend, and what it has spent.
///
/// A chat template comes from a model file downloaded from anywhere and runs in
/// the app's process, so every cost a template can drive is counted here:
/// steps (statements, expressions, items visited and bytes scanned), bytes
/// allocated and written, loop iterations, and the depth of evaluation and of
/// macro calls. Past a limit the render fails with a `.limit` error (the caller
/// falls back to llama.cpp's matcher); a cancelled request fails it with
/// `.cancelled` at the next step.
///
/// Checks are sticky: a helper that cannot throw (printing a value, comparing
/// two) calls `spend`, which records the failure and returns false so the
/// helper stops early; the interpreter throws the recorded failure at its
/// next `step`, and `finish` throws it before any output is used.
///
/// One budget serves one render on one thread; it is a class so that every
/// helper of that render shares its counters. Not `Sendable`: only the
/// cancellation flag crosses threads, and it is an atomic of its own.
final class JinjaBudget {
  /// The limits of one render. The defaults grow with the input, so that no
  /// conversation is too long for its own template, and start far above what
  /// any real template needs (see `init(inputBytes:items:)`).
  struct Limits: Sendable {
    /// Statements and expressions evaluated, plus one per item visited and
    /// one per 64 bytes a string operation scans.
    var steps: Int
    /// Bytes of the rendered text.
    var outputBytes: Int
    /// Bytes of every string, list and dict the render creates, summed (freed ones too).
    var allocatedBytes: Int
    /// Iterations of every loop body, summed.
    var loopIterations: Int
    /// Nested evaluation: expressions inside expressions, blocks inside blocks, calls.
    var depth: Int
    /// Macro calls inside macro calls.
    var macroDepth: Int
    /// Nesting of a list, dict or namespace stored in a namespace.
    var valueDepth: Int

    /// The defaults for an input of `inputBytes` (message and tool text) in
    /// `items` messages and tools.
    ///
    /// Measured on the 70 reference templates × the test conversations and a
    /// 50-turn one (597 renders, `JinjaBudgetTests`), the most any render
    /// spent was 15,711 steps, 370 KB allocated (Reka-Edge, which builds the
    /// whole prompt by concatenation), 28 KB written, 1,350 loop iterations,
    /// 39 levels of nesting and 9 of macro calls. The step, byte and
    /// iteration defaults are at least 90 times that for the same input, and
    /// the terms that grow with the input keep the margin for long
    /// conversations; the depths are 7 to 10 times (they bound recursion on
    /// the engine's 16 MiB stack, `TemplateThread`; jinja2's own limit is near
    /// 100 nested brackets). At the floors a hostile template is stopped in
    /// well under a second in a debug build, holding under 100 MB.
    init(inputBytes: Int, items: Int) {
      let bytes = min(max(0, inputBytes), 1 << 40)
      let items = min(max(0, items), 1 << 30)
      steps = 500_000 + 20_000 * items + bytes / 4
      outputBytes = 4 << 20 + 4_096 * items + 4 * bytes
      allocatedBytes = 32 << 20 + 65_536 * items + 16 * bytes
      loopIterations = 50_000 + 2_000 * items
      depth = 400
      macroDepth = 64
      valueDepth = 128
    }

    init(
      steps: Int, outputBytes: Int, allocatedBytes: Int, loopIterations: Int, depth: Int, macroDepth: Int,
      valueDepth: Int
    ) {
      self.steps = steps
      self.outputBytes = outputBytes
      self.allocatedBytes = allocatedBytes
      self.loopIterations = loopIterations
      self.depth = depth
      self.macroDepth = macroDepth
      self.valueDepth = valueDepth
    }
  }

  let limits: Limits
  private let cancellation: JinjaCancellation?

  private(set) var steps = 0
  private(set) var allocated = 0
  private(set) var written = 0
  private(set) var iterations = 0
  private(set) var depth = 0
  private(set) var macroDepth = 0
  /// The deepest `depth` and `macroDepth` reached (for the tests that size the defaults).
  private(set) var deepest = 0
  private(set) var deepestMacro = 0
  /// The first limit passed (sticky); nil while within budget.
  private(set) var failure: JinjaError?

  /// The namespaces and macro-holding scopes of this render: emptied by
  /// `finish`, since a macro's closure holds the scope that stores it and a
  /// namespace may hold itself, and either cycle would outlive the render.
  private var namespaces: [JinjaNamespace] = []
  private var scopes: [JinjaScope] = []

  init(_ limits: Limits, cancellation: JinjaCancellation? = nil) {
    self.limits = limits
    self.cancellation = cancellation
  }

  /// One statement or expression; throws once a limit is passed or the render is cancelled.
  @inline(__always)
  func step(_ line: Int) throws(JinjaError) {
    steps &+= 1
    if steps >= nextCheck { try checkSlow(line) }
  }

  /// The step count at which `step` next looks at the limits and the
  /// cancellation flag: every 1,024 steps, at the limit, and at once after a
  /// failure is recorded (bulk charges move `steps` past it too).
  private var nextCheck = 1_024

  private func checkSlow(_ line: Int) throws(JinjaError) {
    if let failure { throw failure }
    if steps > limits.steps { throw fail("more than \(limits.steps) steps", line) }
    if cancellation?.isCancelled == true {
      let error = JinjaError(kind: .cancelled, message: "the request was cancelled", line: line)
      failure = error
      nextCheck = 0
      throw error
    }
    nextCheck = min(steps.addingClamped(1_024), limits.steps.addingClamped(1))
  }

  /// Throws the recorded failure (for a helper whose `spend` returned false).
  func stop() throws(JinjaError) -> Never {
    throw failure ?? fail("spent", 0)
  }

  /// Throws the recorded failure, if any.
  func check() throws(JinjaError) {
    if let failure { throw failure }
  }

  /// Records `error` as the failure (unless one is recorded) and returns it.
  private func fail(_ message: String, _ line: Int) -> JinjaError {
    if let failure { return failure }
    let error = JinjaError(kind: .limit, message: "the template exceeds its budget: \(message)", line: line)
    failure = error
    nextCheck = 0
    return error
  }

  /// Charges `count` steps (items visited) and `bytes` scanned, without
  /// throwing; false once the budget is spent (the failure is recorded).
  @discardableResult
  func spend(steps count: Int = 0, scanning bytes: Int = 0) -> Bool {
    // A negative size (a template's `indent(-5)`) must not buy room back.
    steps = steps.addingClamped(max(0, count)).addingClamped(max(0, bytes) >> 6)
    if steps > limits.steps { _ = fail("more than \(limits.steps) steps", 0) }
    return failure == nil
  }

  /// Charges a substring search of a `needle`-byte text in a `haystack`-byte
  /// one at its worst case (every position compared in full), before it runs.
  @discardableResult
  func spend(searching needle: Int, in haystack: Int) -> Bool {
    return spend(scanning: haystack.multipliedClamped(by: max(1, needle)))
  }

  /// Charges `bytes` of new storage, without throwing; false once spent.
  @discardableResult
  func spend(allocating bytes: Int) -> Bool {
    let bytes = max(0, bytes)
    allocated = allocated.addingClamped(bytes)
    // Copying is a step per 256 bytes (a search, above, per 64).
    steps = steps.addingClamped(bytes >> 8)
    if allocated > limits.allocatedBytes { _ = fail("more than \(limits.allocatedBytes) bytes allocated", 0) }
    return failure == nil
  }

  /// Charges `bytes` of new storage before it is made.
  func allocate(_ bytes: Int, _ line: Int) throws(JinjaError) {
    guard spend(allocating: bytes) else { throw fail("", line) }
  }

  /// Charges `count` elements of a new list or dict before it is made.
  func allocate(elements count: Int, _ line: Int) throws(JinjaError) {
    try allocate(count.multipliedClamped(by: MemoryLayout<JinjaValue>.stride), line)
  }

  /// Charges the text `parts` joined by `separator` make, before it is made:
  /// a long separator times many items is refused, not attempted.
  func allocate(joining parts: [String], separator: String, _ line: Int) throws(JinjaError) {
    try check()
    let separators = separator.utf8.count.multipliedClamped(by: max(0, parts.count - 1))
    try allocate(parts.reduce(separators) { $0.addingClamped($1.utf8.count) }, line)
  }

  /// Charges `bytes` appended to the output.
  func write(_ bytes: Int, _ line: Int) throws(JinjaError) {
    written = written.addingClamped(max(0, bytes))
    if written > limits.outputBytes { throw fail("more than \(limits.outputBytes) bytes of output", line) }
    try allocate(bytes, line)
  }

  /// One loop iteration, which is a step too: an empty body has no
  /// statement to step on, and the cancellation flag must still be read.
  func iterate(_ line: Int) throws(JinjaError) {
    iterations &+= 1
    if iterations > limits.loopIterations { throw fail("more than \(limits.loopIterations) loop iterations", line) }
    try step(line)
  }

  /// One level deeper (an expression, a block, a call); pair with `leave`.
  @inline(__always)
  func enter(_ line: Int) throws(JinjaError) {
    depth &+= 1
    if depth > deepest { deepest = depth }
    if depth > limits.depth {
      depth &-= 1
      throw fail("nesting deeper than \(limits.depth)", line)
    }
  }

  @inline(__always)
  func leave() { depth &-= 1 }

  /// One macro call deeper; pair with `leaveMacro`.
  func enterMacro(_ name: String, _ line: Int) throws(JinjaError) {
    macroDepth &+= 1
    if macroDepth > deepestMacro { deepestMacro = macroDepth }
    if macroDepth > limits.macroDepth {
      macroDepth &-= 1
      throw fail("macro '\(name)' called more than \(limits.macroDepth) deep", line)
    }
  }

  func leaveMacro() { macroDepth &-= 1 }

  /// Checks the nesting of `value` before a namespace stores it, charging
  /// the items visited (a namespace counts as its recorded depth).
  func checkDepth(of value: JinjaValue, _ line: Int) throws(JinjaError) -> Int {
    let depth = value.nestingDepth(limit: limits.valueDepth, self)
    try check()
    guard depth <= limits.valueDepth else { throw fail("a value nested deeper than \(limits.valueDepth)", line) }
    return depth
  }

  func retain(_ namespace: JinjaNamespace) { namespaces.append(namespace) }
  func retain(_ scope: JinjaScope) { scopes.append(scope) }

  /// Ends the render: breaks the cycles it may have made, then throws the
  /// recorded failure, if any, so that no output of a failed render is used.
  func finish() throws(JinjaError) {
    for namespace in namespaces { namespace.attributes = JinjaDict() }
    for scope in scopes { scope.clear() }
    namespaces = []
    scopes = []
    try check()
  }
}

/// Set when the request a render serves is cancelled; the render reads it
/// every 1,024 steps. Shared between the cancelling task and the rendering
/// thread, hence atomic.
package final class JinjaCancellation: Sendable {
  private let flag = Atomic<Bool>(false)

  package init() {}

  package func cancel() { flag.store(true, ordering: .relaxed) }
  var isCancelled: Bool { flag.load(ordering: .relaxed) }
}

extension Int {
  /// `self + other`, at `Int.max` instead of overflowing (costs only grow).
  func addingClamped(_ other: Int) -> Int {
    let (sum, overflow) = addingReportingOverflow(other)
    return overflow ? (other > 0 ? .max : .min) : sum
  }

  /// `self * other` for sizes (neither negative), at `Int.max` instead of overflowing.
  func multipliedClamped(by other: Int) -> Int {
    let (product, overflow) = multipliedReportingOverflow(by: other)
    return overflow ? .max : product
  }
}
