/// A value while a template renders, with Python's semantics as jinja2 sees them.
///
/// Dictionaries keep insertion order (as Python's do): `tojson` and `items()`
/// must list keys in the order the messages and tools gave them.
package enum JinjaValue {
  case undefined(String)
  case none
  case bool(Bool)
  case int(Int)
  case double(Double)
  case string(String)
  case array([JinjaValue])
  case dict(JinjaDict)
  case namespace(JinjaNamespace)
  case callable(JinjaCallable)

  var isUndefined: Bool {
    if case .undefined = self { return true }
    return false
  }

  /// Python's truth value.
  var truthy: Bool {
    switch self {
    case .undefined, .none: false
    case .bool(let value): value
    case .int(let value): value != 0
    case .double(let value): value != 0
    case .string(let value): !value.isEmpty
    case .array(let value): !value.isEmpty
    case .dict(let value): !value.keys.isEmpty
    case .namespace, .callable: true
    }
  }

  /// The name of the Python type, for error messages.
  var typeName: String {
    switch self {
    case .undefined: "Undefined"
    case .none: "NoneType"
    case .bool: "bool"
    case .int: "int"
    case .double: "float"
    case .string: "str"
    case .array: "list"
    case .dict: "dict"
    case .namespace: "Namespace"
    case .callable: "function"
    }
  }

  /// The items iteration visits: list elements, dict keys, string
  /// characters; a list made for it is charged to `budget`.
  func iterated(line: Int, _ budget: JinjaBudget) throws(JinjaError) -> [JinjaValue] {
    switch self {
    case .undefined: return []
    case .array(let items): return items
    case .dict(let dict):
      try budget.allocate(elements: dict.keys.count, line)
      return dict.keys.map { dict.keyValue($0) }
    case .string(let text):
      // Each character becomes a string of its own: its bytes plus a value each.
      try budget.allocate(elements: text.utf8.count, line)
      try budget.allocate(text.utf8.count, line)
      return text.map { .string(String($0)) }
    default: throw JinjaError(kind: .runtime, message: "'\(typeName)' object is not iterable", line: line)
    }
  }

  /// How deeply lists, dicts and namespaces nest in this value (a scalar is
  /// 0), up to just past `limit`; a namespace counts as the depth it recorded
  /// when its attributes were set, so cycles through namespaces end. Each
  /// item visited is a step of `budget`.
  func nestingDepth(limit: Int, _ budget: JinjaBudget) -> Int {
    guard budget.spend(steps: 1) else { return 0 }
    switch self {
    case .array(let items):
      guard limit > 0 else { return 1 }
      var deepest = 0
      for item in items {
        deepest = max(deepest, item.nestingDepth(limit: limit - 1, budget))
        if deepest >= limit { break }
      }
      return deepest + 1
    case .dict(let dict):
      guard limit > 0 else { return 1 }
      var deepest = 0
      for (_, item) in dict.pairs {
        deepest = max(deepest, item.nestingDepth(limit: limit - 1, budget))
        if deepest >= limit { break }
      }
      return deepest + 1
    case .namespace(let namespace): return namespace.depth
    default: return 0
    }
  }
}

/// A Python dict with string keys, in insertion order.
package struct JinjaDict {
  private(set) var keys: [String] = []
  private var storage: [String: JinjaValue] = [:]

  init() {}

  package init(_ pairs: [(String, JinjaValue)]) {
    for (key, value) in pairs { self[key] = value }
  }

  subscript(key: String) -> JinjaValue? {
    get { storage[key] }
    set {
      if let newValue {
        if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
      } else if storage.removeValue(forKey: key) != nil {
        keys.removeAll { $0 == key }
      }
    }
  }

  var pairs: [(String, JinjaValue)] { keys.map { ($0, storage[$0] ?? .none) } }

  /// Keys that are not strings (`{0: 'a'}` in a template) are stored under
  /// an encoded string; this is the key as the template wrote it.
  private var nonStringKeys: [String: JinjaValue] = [:]

  static func storageKey(_ key: JinjaValue, _ budget: JinjaBudget) -> String {
    if case .string(let text) = key { return text }
    return "\u{1}" + key.pythonRepr(budget)
  }

  func keyValue(_ stored: String) -> JinjaValue { nonStringKeys[stored] ?? .string(stored) }

  mutating func set(_ key: JinjaValue, _ value: JinjaValue, _ budget: JinjaBudget) {
    let stored = Self.storageKey(key, budget)
    if case .string = key {} else { nonStringKeys[stored] = key }
    self[stored] = value
  }

  /// `(key, value)` pairs with the keys as written.
  var items: [JinjaValue] { pairs.map { .array([keyValue($0.0), $0.1]) } }
}

/// `namespace()`: the one mutable object templates have, so that a loop can
/// carry state out of its own scope.
package final class JinjaNamespace {
  var attributes = JinjaDict()
  /// How deeply values nest inside this namespace (itself included), as of
  /// the last attribute set: `JinjaBudget.Limits.valueDepth` bounds it, so a
  /// loop that wraps a namespace in itself cannot build a chain that would
  /// overflow the stack when printed or freed.
  var depth = 1
  init(_ attributes: JinjaDict, depth: Int = 1) {
    self.attributes = attributes
    self.depth = depth
  }
}

/// A function a template can call: a macro, a bound method or a global.
package struct JinjaCallable {
  var name: String
  var call: (_ arguments: JinjaArguments, _ line: Int) throws(JinjaError) -> JinjaValue
}

/// Positional and keyword arguments of one call.
struct JinjaArguments {
  var positional: [JinjaValue] = []
  var keyword: [(String, JinjaValue)] = []

  /// The argument at `index`, or the keyword `name`, or nil.
  func value(_ index: Int, _ name: String) -> JinjaValue? {
    if index < positional.count { return positional[index] }
    return keyword.first { $0.0 == name }?.1
  }
}
