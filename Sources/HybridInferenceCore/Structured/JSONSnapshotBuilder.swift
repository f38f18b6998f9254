/// Builds the `JSONValue` snapshots of a streamed answer from a parser's
/// events, each snapshot costing the depth of the value, not its size.
///
/// Every open container is a frame holding its own array or dictionary
/// without its open child, so adding an item or a member mutates one
/// uniquely held buffer in place. A snapshot appends each frame's open child
/// (the frame inside it, or the string or number being read) and wraps the
/// frames into one value, outermost last: one step per level, nothing
/// copied. The next event takes the open children back out. When the caller
/// has let go of the previous snapshot, that is in place too; when it keeps
/// every snapshot, taking them out copies the open containers only (their
/// finished items are shared, never copied).
///
/// The containers are plain stored properties, not `JSONValue` payloads:
/// mutating an enum's payload in place depends on the optimiser, and a
/// debug build copied the whole array at every snapshot (quadratic).
struct JSONSnapshotBuilder: JSONEventSink {
  private struct Frame {
    let isArray: Bool
    var items: [JSONValue] = []
    var members: [String: JSONValue] = [:]
    /// The member whose value comes next (objects).
    var key: String?
    /// Whether the open child is in `items`/`members` (after a snapshot).
    var holdsOpenChild = false

    init(isArray: Bool) {
      self.isArray = isArray
    }

    var value: JSONValue { isArray ? .array(items) : .object(members) }

    mutating func add(_ value: JSONValue) {
      if isArray {
        items.append(value)
      } else if let key {
        members[key] = value
      }
    }
  }

  private var frames: [Frame] = []
  /// The complete top-level value.
  private var complete: JSONValue?
  /// The text so far of an open string value.
  private var string: String?

  mutating func open(_ container: JSONPrefixParser.Container) {
    detach()
    frames.append(Frame(isArray: container == .array))
  }

  mutating func close() {
    detach()
    guard let frame = frames.popLast() else { return }
    add(frame.value)
  }

  mutating func key(_ name: String) {
    detach()
    guard !frames.isEmpty else { return }
    frames[frames.count - 1].key = name
  }

  mutating func scalar(_ value: JSONScalar) {
    detach()
    add(OrderedJSON(value).jsonValue)
  }

  mutating func beginString() {
    detach()
    string = ""
  }

  mutating func appendString(_ piece: String) {
    detach()
    string?.append(piece)
  }

  mutating func endString() {
    detach()
    add(.string(string ?? ""))
    string = nil
  }

  private mutating func add(_ value: JSONValue) {
    guard !frames.isEmpty else {
      complete = value
      return
    }
    frames[frames.count - 1].add(value)
    frames[frames.count - 1].key = nil
  }

  /// The value so far; `partialNumber` stands for the number being read.
  /// Nil when nothing usable has been read yet.
  mutating func snapshot(partialNumber: JSONScalar?) -> JSONValue? {
    if let complete { return complete }
    detach()
    var open: JSONValue? = string.map(JSONValue.string) ?? partialNumber.map { OrderedJSON($0).jsonValue }
    for level in frames.indices.reversed() {
      if let child = open {
        frames[level].add(child)
        frames[level].holdsOpenChild = true
      }
      open = frames[level].value
    }
    return open
  }

  /// Takes the open children back out, outermost first, so that each frame
  /// is again the only holder of the next one's buffer.
  private mutating func detach() {
    for level in frames.indices {
      guard frames[level].holdsOpenChild else { return }
      frames[level].holdsOpenChild = false
      if frames[level].isArray {
        frames[level].items.removeLast()
      } else if let key = frames[level].key {
        frames[level].members.removeValue(forKey: key)
      }
    }
  }
}
