/// `a.b`, `a[b]` and `a[x:y:z]` as jinja2's sandboxed `getattr`/`getitem` do them:
/// a missing key or index is undefined, dereferencing undefined is an error.
enum JinjaAccess {
  static func attribute(_ base: JinjaValue, _ name: String, line: Int, _ budget: JinjaBudget) throws(JinjaError)
    -> JinjaValue
  {
    switch base {
    case .undefined(let baseName):
      throw JinjaError(kind: .runtime, message: "'\(baseName)' is undefined (reading '\(name)')", line: line)
    case .namespace(let namespace):
      return namespace.attributes[name] ?? .undefined(name)
    case .dict(let dict):
      if let method = JinjaMethods.method(base, name, budget) { return method }
      return dict[name] ?? .undefined(name)
    default:
      return JinjaMethods.method(base, name, budget) ?? .undefined(name)
    }
  }

  static func item(_ base: JinjaValue, _ key: JinjaValue, line: Int, _ budget: JinjaBudget) throws(JinjaError)
    -> JinjaValue
  {
    switch (base, key) {
    case (.undefined(let baseName), _):
      throw JinjaError(kind: .runtime, message: "'\(baseName)' is undefined (indexing)", line: line)
    case (.dict(let dict), .string(let name)):
      return dict[name] ?? .undefined(name)
    case (.dict(let dict), _):
      return dict[JinjaDict.storageKey(key, budget)] ?? .undefined("item")
    case (.namespace(let namespace), .string(let name)):
      return namespace.attributes[name] ?? .undefined(name)
    case (.array(let items), _):
      guard let index = position(key, count: items.count) else { return .undefined("item") }
      return items[index]
    case (.string(let text), _):
      // Reaching the index scans the string.
      try budget.allocate(elements: text.utf8.count, line)
      let scalars = Array(text.unicodeScalars)
      guard let index = position(key, count: scalars.count) else { return .undefined("item") }
      return .string(String(scalars[index]))
    case (_, .string(let name)):
      return JinjaMethods.method(base, name, budget) ?? .undefined(name)
    default:
      return .undefined("item")
    }
  }

  private static func position(_ key: JinjaValue, count: Int) -> Int? {
    guard case .int(let raw) = key else { return nil }
    // raw < 0 and count >= 0: the sum cannot overflow.
    let index = raw < 0 ? raw + count : raw
    return (0..<count).contains(index) ? index : nil
  }

  static func slice(
    _ base: JinjaValue, _ start: JinjaValue?, _ stop: JinjaValue?, _ step: JinjaValue?, line: Int,
    _ budget: JinjaBudget
  ) throws(JinjaError) -> JinjaValue {
    func bound(_ value: JinjaValue?) throws(JinjaError) -> Int? {
      switch value {
      case nil, .none?: return nil
      case .int(let number)?: return number
      default: throw JinjaError(kind: .runtime, message: "slice indices must be integers", line: line)
      }
    }
    let stride = try bound(step) ?? 1
    guard stride != 0 else { throw JinjaError(kind: .runtime, message: "slice step cannot be zero", line: line) }
    func indices(_ count: Int) throws(JinjaError) -> [Int] {
      func clamp(_ raw: Int?, _ fallback: Int) -> Int {
        guard let raw else { return fallback }
        let value = raw < 0 ? raw + count : raw
        return stride > 0 ? min(max(value, 0), count) : min(max(value, -1), count - 1)
      }
      let from = clamp(try bound(start), stride > 0 ? 0 : count - 1)
      let to = clamp(try bound(stop), stride > 0 ? count : -1)
      // Counted first, then made: a step near Int.max must not overflow
      // the way `stride(from:to:by:)` would advance past the end.
      let length = JinjaOperators.rangeCount(from, to, stride) ?? 0
      try budget.allocate(elements: length, line)
      return (0..<length).map { from &+ $0 &* stride }
    }
    switch base {
    case .array(let items): return .array(try indices(items.count).map { items[$0] })
    case .string(let text):
      try budget.allocate(elements: text.utf8.count, line)
      let scalars = Array(text.unicodeScalars)
      var out = String.UnicodeScalarView()
      for index in try indices(scalars.count) { out.append(scalars[index]) }
      return .string(String(out))
    case .undefined(let name): throw JinjaError(kind: .runtime, message: "'\(name)' is undefined (slicing)", line: line)
    default: throw JinjaError(kind: .runtime, message: "'\(base.typeName)' object is not subscriptable", line: line)
    }
  }
}
