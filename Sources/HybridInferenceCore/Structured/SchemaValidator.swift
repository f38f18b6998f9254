import Foundation

/// Checks a JSON value against a JSON Schema (the subset this library
/// serves: type, enum, const, properties, required, additionalProperties,
/// items, minItems/maxItems, minLength/maxLength, pattern, minimum/maximum,
/// anyOf/oneOf, `$ref` to `#/$defs/...`).
///
/// The device grammar guarantees syntax and most of the shape, but not a
/// number range, and the cloud guarantees less than it says; checking the
/// answer where it is produced lets a hybrid fall back instead of the app
/// receiving a value that breaks its own rules.
///
/// The value is the server's, so the check is bounded whatever it holds:
/// - each (schema node, part of the value) pair is checked once (results
///   of definitions and alternatives, the nodes a check can meet twice,
///   are remembered), so alternatives that refer to each other cost the
///   product of the two sizes at most, never a branch per level (a
///   self-referencing `anyOf` would otherwise try every branch at every level); a
///   pair met again while it is being checked (a `$ref` loop that reads
///   nothing) does not match;
/// - the whole check takes at most `workLimit` steps, and `pattern`s at
///   most `patternWorkLimit` progress reports of the regular-expression
///   engine over the whole answer; past either the answer is refused as a violation, never
///   accepted unchecked;
/// - it keeps its own stack instead of recursing, so neither the value's
///   nesting nor a chain of `$ref`s can overflow the thread's.
struct SchemaValidator {
  /// Checks of one (schema node, value part) pair, for one answer.
  static let workLimit = 1_000_000
  /// ICU progress reports for all of one answer's `pattern` matches: ICU
  /// reports periodically while it matches (a fraction of a millisecond
  /// apart), so the limit bounds the time an answer's patterns take.
  static let patternWorkLimit = 500
  let root: OrderedJSON

  /// Nil when `value` conforms; else why not, with the path.
  func violation(of value: OrderedJSON) -> String? {
    var run = Run(schema: CompiledSchema(root), values: ValueTable(value))
    let problem = run.check(node: 0, value: 0)
    if let limit = run.exhausted { return "checking the answer against the schema took more than \(limit)" }
    return problem
  }

  /// One check's state: what each pair gave, and what is left of the budgets.
  private struct Run {
    enum Memo {
      /// Being checked, at this recursion depth.
      case checking(depth: Int)
      case done(String?)
    }

    let schema: CompiledSchema
    let values: ValueTable
    var memo: [Int: Memo] = [:]
    var work = SchemaValidator.workLimit
    var patternWork = SchemaValidator.patternWorkLimit
    var expressions: [String: NSRegularExpression?] = [:]
    /// Set when a budget ran out: the answer is refused, saying which.
    var exhausted: String?
    /// The shallowest pair still being checked that the current check met
    /// again. A result that leaned on such a pair holds only while that
    /// pair is unfinished, so it is not remembered.
    var shallowestLoop = Int.max

    init(schema: CompiledSchema, values: ValueTable) {
      self.schema = schema
      self.values = values
    }

    /// A check in progress: the pair, and how far it has got.
    private struct Frame {
      enum Stage {
        case start
        /// Waiting for the `$ref` target's result.
        case reference
        /// The next alternative to try (the previous one's result is in).
        case alternatives(next: Int)
        /// The next part of the value to check (the previous one's result is in).
        case children(next: Int)
      }

      let node: Int
      let value: Int
      let key: Int
      /// Whether the result is remembered (`CompiledSchema.shared`).
      let remembered: Bool
      var stage = Stage.start
      /// `shallowestLoop` of the check that started this one.
      let outerLoop: Int
    }

    /// Checks the pair with an explicit stack, not recursion: the value is
    /// the server's, and a debug build's frames are large.
    mutating func check(node: Int, value: Int) -> String? {
      var stack: [Frame] = []
      var result = enter(node, value, &stack)
      while let top = stack.indices.last, exhausted == nil {
        let frame = stack[top]
        let schemaNode = schema.nodes[frame.node]
        switch frame.stage {
        case .start:
          if case .success(let target)? = schemaNode.reference {
            stack[top].stage = .reference
            result = enter(target, frame.value, &stack)
          } else if let problem = ownViolation(frame.node, frame.value) {
            result = finish(problem, &stack)
          } else {
            stack[top].stage = .alternatives(next: 0)
          }
        case .reference:
          result = finish(result, &stack)
        case .alternatives(let next):
          if next > 0, result == nil {
            stack[top].stage = .children(next: 0)
          } else if let alternatives = schemaNode.alternatives {
            if next < alternatives.count {
              stack[top].stage = .alternatives(next: next + 1)
              result = enter(alternatives[next], frame.value, &stack)
            } else {
              result = finish(problem(frame.value, "matches none of the alternatives"), &stack)
            }
          } else {
            stack[top].stage = .children(next: 0)
          }
        case .children(let next):
          if next > 0, let failed = result {
            result = finish(failed, &stack)
          } else if let (index, child) = nextChild(of: frame.value, from: next, schemaNode) {
            stack[top].stage = .children(next: index + 1)
            result = enter(child, values.entries[frame.value].children.lowerBound + index, &stack)
          } else {
            result = finish(nil, &stack)
          }
        }
      }
      return exhausted == nil ? result : ""
    }

    /// Starts checking a pair: its result at once when it is known (or
    /// cannot be had), else nil with its frame pushed.
    private mutating func enter(_ node: Int, _ value: Int, _ stack: inout [Frame]) -> String? {
      let key = value &* schema.nodes.count &+ node
      switch memo[key] {
      case .done(let problem)?: return problem
      case .checking(let level)?:
        shallowestLoop = min(shallowestLoop, level)
        return problem(value, "the schema refers to itself without reading the value")
      case nil: break
      }
      work -= 1
      guard work > 0 else { return exhaust("\(SchemaValidator.workLimit) steps") }
      memo[key] = .checking(depth: stack.count)
      stack.append(
        Frame(
          node: node, value: value, key: key, remembered: schema.shared.contains(node), outerLoop: shallowestLoop))
      shallowestLoop = Int.max
      return nil
    }

    /// Ends the top check with `problem` and remembers it, unless it leaned
    /// on a check below it that is not finished.
    private mutating func finish(_ problem: String?, _ stack: inout [Frame]) -> String? {
      guard let frame = stack.popLast() else { return problem }
      let depth = stack.count
      let loop = shallowestLoop
      memo[frame.key] = loop < depth || !frame.remembered ? nil : .done(problem)
      shallowestLoop = min(frame.outerLoop, loop < depth ? loop : Int.max)
      return problem
    }

    /// The first part of `value` from position `start` that a schema
    /// applies to (`items`, or the member's property), with that schema.
    private func nextChild(of value: Int, from start: Int, _ node: CompiledSchema.Node) -> (Int, Int)? {
      let children = values.entries[value].children
      switch values.entries[value].value {
      case .array:
        guard let items = node.items, start < children.count else { return nil }
        return (start, items)
      case .object:
        var index = start
        while index < children.count {
          if case .member(let name) = values.entries[children.lowerBound + index].step,
            let property = node.properties[name]
          {
            return (index, property)
          }
          index += 1
        }
        return nil
      default:
        return nil
      }
    }

    private func problem(_ id: Int, _ what: String) -> String { "\(values.path(of: id)): \(what)" }

    private mutating func exhaust(_ limit: String) -> String {
      exhausted = limit
      return ""
    }

    /// Every keyword of `node` that reads `id` alone, not its parts.
    private mutating func ownViolation(_ nodeID: Int, _ id: Int) -> String? {
      let node = schema.nodes[nodeID]
      let value = values.entries[id].value
      let table = values
      func path() -> String { table.path(of: id) }
      if let allows = node.allows { return allows ? nil : "\(path()): no value is allowed" }
      if case .failure(let error)? = node.reference { return "\(path()): unknown $ref \(error.reference)" }
      if let constant = node.constant, constant != value { return "\(path()): is not \(constant.jsonText)" }
      if let options = node.options {
        work -= options.count
        if !options.contains(value) {
          return "\(path()): \(value.jsonText.prefix(200)) is not one of \(OrderedJSON.array(options).jsonText)"
        }
      }
      if let types = node.types, !types.contains(where: { Self.fits(value, type: $0) }) {
        return "\(path()): \(value.jsonText.prefix(200)) is not of type \(types.joined(separator: " or "))"
      }
      switch value {
      case .string(let text): return stringViolation(text, node, path: path)
      case .number, .exactInteger: return NumberBounds.violation(value, node, path: path)
      case .array(let items):
        if let least = node.minItems, Double(items.count) < least {
          return "\(path()): fewer than \(OrderedJSON.format(least)) items"
        }
        if let most = node.maxItems, Double(items.count) > most {
          return "\(path()): more than \(OrderedJSON.format(most)) items"
        }
      case .object(let members):
        work -= members.count + node.required.count
        if !node.required.isEmpty {
          let names = Set(members.map(\.0))
          for name in node.required where !names.contains(name) { return "\(path()): missing \(name)" }
        }
        if node.forbidsOtherMembers, let other = members.first(where: { node.properties[$0.0] == nil }) {
          return "\(path()): unexpected member \(other.0)"
        }
      default: break
      }
      return nil
    }

    private static func fits(_ value: OrderedJSON, type: String) -> Bool {
      switch (type, value) {
      case ("string", .string), ("boolean", .bool), ("null", .null), ("array", .array), ("object", .object),
        ("number", .number), ("number", .exactInteger), ("integer", .exactInteger):
        true
      case ("integer", .number(let number)): number == number.rounded()
      default: false
      }
    }

    private mutating func stringViolation(_ text: String, _ node: CompiledSchema.Node, path: () -> String) -> String? {
      // Counted in Unicode scalars, as the device grammar counts them.
      if let least = node.minLength, Double(text.unicodeScalars.count) < least {
        return "\(path()): shorter than \(OrderedJSON.format(least)) characters"
      }
      if let most = node.maxLength, Double(text.unicodeScalars.count) > most {
        return "\(path()): longer than \(OrderedJSON.format(most)) characters"
      }
      if let pattern = node.pattern, let expression = expression(for: pattern) {
        switch matches(expression, text) {
        case true?: break
        case false?: return "\(path()): does not match \(pattern)"
        case nil:
          return "\(path()): matching \(pattern) took more than the \(SchemaValidator.patternWorkLimit) steps allowed"
        }
      }
      return nil
    }

    /// A pattern compiled once per check; nil for one ICU does not read
    /// (it is then not checked: the schema is the app's).
    private mutating func expression(for pattern: String) -> NSRegularExpression? {
      if let known = expressions[pattern] { return known }
      let expression = try? NSRegularExpression(pattern: pattern)
      expressions[pattern] = expression
      return expression
    }

    /// Whether `expression` finds a match in `text`; nil when the pattern
    /// budget ran out first (the matcher is stopped where it is).
    private mutating func matches(_ expression: NSRegularExpression, _ text: String) -> Bool? {
      var found = false
      var budget = patternWork
      expression.enumerateMatches(
        in: text, options: [.reportProgress], range: NSRange(text.startIndex..., in: text)
      ) { result, _, stop in
        if result != nil {
          found = true
          stop.pointee = true
        } else {
          budget -= 1
          if budget <= 0 { stop.pointee = true }
        }
      }
      patternWork = budget
      return found || budget > 0 ? found : nil
    }
  }
}

extension GenerationSchema {
  /// Parses `text` and checks it against the schema (and, for a derived
  /// schema, that it decodes into the type).
  /// - Throws: `HybridInferenceError.invalidStructuredOutput` saying what is
  ///   wrong: not JSON, nested deeper than 512 levels, not conforming, or
  ///   too costly to check (see `SchemaValidator`).
  package func check(_ text: String) throws(HybridInferenceError) -> OrderedJSON {
    let schema = try ordered()
    let value: OrderedJSON
    do {
      value = try JSONPrefixParser.parse(text)
    } catch {
      throw .invalidStructuredOutput("the answer is not JSON (\(error)): \(text.prefix(200))")
    }
    if let problem = SchemaValidator(root: schema).violation(of: value) {
      throw .invalidStructuredOutput(problem)
    }
    if let decodeCheck {
      do {
        try decodeCheck(Data(text.utf8))
      } catch {
        throw .invalidStructuredOutput("the answer does not decode: \(error)")
      }
    }
    return value
  }
}
