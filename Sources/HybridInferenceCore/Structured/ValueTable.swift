/// A JSON value laid out as numbered nodes (breadth first), so that a
/// check can name each part of the value by a number, and tell its path
/// only when it reports a problem there.
struct ValueTable {
  enum Step {
    case root
    case index(Int)
    case member(String)
  }

  struct Entry {
    let value: OrderedJSON
    let parent: Int
    let step: Step
    /// The entries of the items or members, in order.
    var children: Range<Int> = 0..<0
  }

  private(set) var entries: [Entry]

  /// Laid out with a queue, not recursion: any depth.
  init(_ root: OrderedJSON) {
    entries = [Entry(value: root, parent: -1, step: .root)]
    var next = 0
    while next < entries.count {
      let first = entries.count
      switch entries[next].value {
      case .array(let items):
        for (index, item) in items.enumerated() {
          entries.append(Entry(value: item, parent: next, step: .index(index)))
        }
      case .object(let members):
        for (name, member) in members { entries.append(Entry(value: member, parent: next, step: .member(name))) }
      default: break
      }
      entries[next].children = first..<entries.count
      next += 1
    }
  }

  /// `$`, `$.name`, `$[3]`, ... for the entry `id`.
  func path(of id: Int) -> String {
    var steps: [String] = []
    var current = id
    while current > 0 {
      switch entries[current].step {
      case .root: break
      case .index(let index): steps.append("[\(index)]")
      case .member(let name): steps.append(".\(name)")
      }
      current = entries[current].parent
    }
    return "$" + steps.reversed().joined()
  }
}
