/// Builds an `OrderedJSON` from a parser's events: the whole value, or the
/// value so far with what is open closed (`value(partialNumber:)`).
///
/// Each open container is a frame of its own, so adding to it never copies
/// its parent; a frame joins its parent when it closes.
struct OrderedJSONBuilder: JSONEventSink {
  private struct Frame {
    let isArray: Bool
    var items: [OrderedJSON] = []
    var members: [(String, OrderedJSON)] = []
    /// The member whose value comes next.
    var key: String?

    var value: OrderedJSON { isArray ? .array(items) : .object(members) }

    mutating func add(_ value: OrderedJSON) {
      if isArray {
        items.append(value)
      } else if let key {
        members.append((key, value))
        self.key = nil
      }
    }
  }

  private var frames: [Frame] = []
  private var root: OrderedJSON?
  /// The text of a string value being read.
  private var string: String?

  mutating func open(_ container: JSONPrefixParser.Container) {
    frames.append(Frame(isArray: container == .array))
  }

  mutating func close() {
    guard let frame = frames.popLast() else { return }
    add(frame.value)
  }

  mutating func key(_ name: String) {
    guard !frames.isEmpty else { return }
    frames[frames.count - 1].key = name
  }

  mutating func scalar(_ value: JSONScalar) { add(OrderedJSON(value)) }

  mutating func beginString() { string = "" }

  mutating func appendString(_ piece: String) { string?.append(piece) }

  mutating func endString() {
    add(.string(string ?? ""))
    string = nil
  }

  private mutating func add(_ value: OrderedJSON) {
    if frames.isEmpty {
      root = value
    } else {
      frames[frames.count - 1].add(value)
    }
  }

  /// The complete value, or the value so far: an open string as read so
  /// far, `partialNumber` as the number being read, open containers closed.
  func value(partialNumber: JSONScalar?) -> OrderedJSON? {
    if let root { return root }
    var open: OrderedJSON? = string.map(OrderedJSON.string) ?? partialNumber.map(OrderedJSON.init)
    for var frame in frames.reversed() {
      if let open { frame.add(open) }
      open = frame.value
    }
    return open
  }
}
