import Foundation

/// Evaluating expressions: names, literals, operators, calls, filters and tests.
extension JinjaInterpreter {
  func evaluate(_ expression: JinjaExpression, _ scope: JinjaScope, _ line: Int) throws(JinjaError) -> JinjaValue {
    try budget.step(line)
    try budget.enter(line)
    defer { budget.leave() }
    switch expression {
    case .literal(let literal):
      switch literal {
      case .none: return .none
      case .bool(let value): return .bool(value)
      case .int(let value): return .int(value)
      case .double(let value): return .double(value)
      case .string(let value): return .string(value)
      }
    case .name(let name):
      return scope.lookup(name) ?? .undefined(name)
    case .list(let items), .tuple(let items):
      try budget.allocate(elements: items.count, line)
      var values: [JinjaValue] = []
      for item in items { values.append(try evaluate(item, scope, line)) }
      return .array(values)
    case .dict(let pairs):
      try budget.allocate(elements: 2 * pairs.count, line)
      var dict = JinjaDict()
      for (key, value) in pairs {
        dict.set(try evaluate(key, scope, line), try evaluate(value, scope, line), budget)
      }
      return .dict(dict)
    case .attribute(let base, let name):
      return try JinjaAccess.attribute(try evaluate(base, scope, line), name, line: line, budget)
    case .item(let base, let key):
      return try JinjaAccess.item(try evaluate(base, scope, line), try evaluate(key, scope, line), line: line, budget)
    case .slice(let base, let start, let stop, let step):
      return try JinjaAccess.slice(
        try evaluate(base, scope, line), try start.map { e throws(JinjaError) in try evaluate(e, scope, line) },
        try stop.map { e throws(JinjaError) in try evaluate(e, scope, line) },
        try step.map { e throws(JinjaError) in try evaluate(e, scope, line) }, line: line, budget)
    case .call(let callee, let arguments):
      return try invoke(try evaluate(callee, scope, line), try evaluate(arguments, scope, line), line)
    case .filter(let base, let name, let arguments):
      let value = try evaluate(base, scope, line)
      return try JinjaFilters.apply(name, value, try evaluate(arguments, scope, line), line: line, self)
    case .test(let base, let name, let negated, let arguments):
      let value = try evaluate(base, scope, line)
      let result = try JinjaTests.apply(name, value, try evaluate(arguments, scope, line), line: line, budget)
      return .bool(result != negated)
    case .unary(let op, let operand):
      let value = try evaluate(operand, scope, line)
      if op == "not" { return .bool(!value.truthy) }
      switch value {
      case .int(let number):
        let (negated, overflow) = Int(0).subtractingReportingOverflow(number)
        guard !overflow else { throw JinjaError(kind: .runtime, message: "integer overflow in unary -", line: line) }
        return .int(negated)
      case .double(let number): return .double(-number)
      case .bool(let flag): return .int(flag ? -1 : 0)
      default: throw JinjaError(kind: .runtime, message: "bad operand type for unary -", line: line)
      }
    case .binary(let op, let leftExpression, let rightExpression):
      let left = try evaluate(leftExpression, scope, line)
      if op == "and" { return left.truthy ? try evaluate(rightExpression, scope, line) : left }
      if op == "or" { return left.truthy ? left : try evaluate(rightExpression, scope, line) }
      return try JinjaOperators.binary(op, left, try evaluate(rightExpression, scope, line), line: line, budget)
    case .compare(let first, let operations):
      var left = try evaluate(first, scope, line)
      for (op, rightExpression) in operations {
        let right = try evaluate(rightExpression, scope, line)
        guard try JinjaOperators.compare(op, left, right, line: line, budget) else { return .bool(false) }
        left = right
      }
      return .bool(true)
    case .conditional(let value, let condition, let otherwise):
      if try evaluate(condition, scope, line).truthy { return try evaluate(value, scope, line) }
      return try otherwise.map { e throws(JinjaError) in try evaluate(e, scope, line) } ?? .undefined("else")
    }
  }

  func evaluate(_ arguments: JinjaCallArguments, _ scope: JinjaScope, _ line: Int) throws(JinjaError)
    -> JinjaArguments
  {
    var result = JinjaArguments()
    for argument in arguments.positional { result.positional.append(try evaluate(argument, scope, line)) }
    for (name, argument) in arguments.keyword { result.keyword.append((name, try evaluate(argument, scope, line))) }
    return result
  }

  func invoke(_ callee: JinjaValue, _ arguments: JinjaArguments, _ line: Int) throws(JinjaError) -> JinjaValue {
    switch callee {
    case .callable(let function): return try function.call(arguments, line)
    case .undefined(let name): throw JinjaError(kind: .runtime, message: "'\(name)' is undefined", line: line)
    default: throw JinjaError(kind: .runtime, message: "'\(callee.typeName)' object is not callable", line: line)
    }
  }

  /// The globals transformers adds to jinja2's: `raise_exception`,
  /// `strftime_now`, and jinja2's own `namespace` and `range`.
  func globals() -> [String: JinjaValue] {
    let now = self.now
    let budget = self.budget
    return [
      "raise_exception": .callable(
        JinjaCallable(name: "raise_exception") { arguments, line throws(JinjaError) in
          throw JinjaError(
            kind: .raised, message: arguments.value(0, "message")?.pythonString(budget) ?? "", line: line)
        }),
      "strftime_now": .callable(
        JinjaCallable(name: "strftime_now") { arguments, line throws(JinjaError) in
          let format = arguments.value(0, "format")?.pythonString(budget) ?? ""
          try budget.allocate(format.utf8.count * 16, line)
          return .string(JinjaStrftime.format(now, format))
        }),
      "namespace": .callable(
        JinjaCallable(name: "namespace") { arguments, line throws(JinjaError) in
          var attributes = JinjaDict()
          if case .dict(let initial) = arguments.positional.first {
            for (key, value) in initial.pairs { attributes[key] = value }
          }
          for (key, value) in arguments.keyword { attributes[key] = value }
          let depth = try budget.checkDepth(of: .dict(attributes), line)
          let namespace = JinjaNamespace(attributes, depth: depth)
          budget.retain(namespace)
          return .namespace(namespace)
        }),
      "range": .callable(
        JinjaCallable(name: "range") { arguments, line throws(JinjaError) in
          let bounds = arguments.positional.compactMap { value -> Int? in
            if case .int(let number) = value { return number }
            return nil
          }
          guard bounds.count == arguments.positional.count, (1...3).contains(bounds.count) else {
            throw JinjaError(kind: .runtime, message: "range() takes 1 to 3 integers", line: line)
          }
          let start = bounds.count > 1 ? bounds[0] : 0
          let stop = bounds.count > 1 ? bounds[1] : bounds[0]
          let step = bounds.count > 2 ? bounds[2] : 1
          guard step != 0 else { throw JinjaError(kind: .runtime, message: "range() step is zero", line: line) }
          // jinja2's sandbox refuses ranges over MAX_RANGE (100,000) items;
          // the length is found before any item is made.
          guard let count = JinjaOperators.rangeCount(start, stop, step), count <= 100_000 else {
            throw JinjaError(
              kind: .runtime, message: "range too big: the sandbox refuses more than 100000 items", line: line)
          }
          try budget.allocate(elements: count, line)
          // Each item lies between start and stop, so wrapping arithmetic is exact.
          return .array((0..<count).map { .int(start &+ $0 &* step) })
        }),
    ]
  }
}
