extension JSONValue {
  /// Equal when both are the same case with equal contents (numbers by
  /// `Double`'s `==`, objects whatever their members' order), compared with
  /// a stack of its own: an app may build a value of any depth and compare
  /// it, and a recursive comparison would overflow the thread's stack.
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    var pending = [(lhs, rhs)]
    while let (left, right) = pending.popLast() {
      switch (left, right) {
      case (.null, .null): continue
      case (.bool(let a), .bool(let b)): if a != b { return false }
      case (.number(let a), .number(let b)): if a != b { return false }
      case (.string(let a), .string(let b)): if a != b { return false }
      case (.exactInteger(let a), .exactInteger(let b)): if a != b { return false }
      case (.array(let a), .array(let b)):
        guard a.count == b.count else { return false }
        pending.append(contentsOf: zip(a, b))
      case (.object(let a), .object(let b)):
        guard a.count == b.count else { return false }
        for (key, value) in a {
          guard let other = b[key] else { return false }
          pending.append((value, other))
        }
      default: return false
      }
    }
    return true
  }

  /// Hashes the value with a stack of its own (see `==`); an object's
  /// members in name order, so equal objects hash alike.
  public func hash(into hasher: inout Hasher) {
    var pending = [self]
    while let value = pending.popLast() {
      switch value {
      case .null: hasher.combine(0)
      case .bool(let flag):
        hasher.combine(1)
        hasher.combine(flag)
      case .number(let number):
        hasher.combine(2)
        hasher.combine(number)
      case .string(let text):
        hasher.combine(3)
        hasher.combine(text)
      case .exactInteger(let integer):
        hasher.combine(4)
        hasher.combine(integer)
      case .array(let items):
        hasher.combine(5)
        hasher.combine(items.count)
        pending.append(contentsOf: items.reversed())
      case .object(let members):
        hasher.combine(6)
        hasher.combine(members.count)
        for (key, member) in members.sorted(by: { $0.key > $1.key }) {
          hasher.combine(key)
          pending.append(member)
        }
      }
    }
  }
}
