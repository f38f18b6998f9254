/// Expressions, with jinja2's precedence: conditional, `or`, `and`, `not`,
/// comparisons, `+ -`, `~`, `* / // %`, `**`, unary minus, then postfix
/// (attributes, subscripts, calls) with filters and `is` tests.
extension JinjaParser {
  /// An expression, or an implicit tuple `a, b`.
  mutating func parseTuple(conditional: Bool = true) throws(JinjaError) -> JinjaExpression {
    let first = conditional ? try parseExpression() : try parseOr()
    guard current.kind == .symbol(",") else { return first }
    var items = [first]
    while skip(symbol: ",") {
      if case .blockEnd = current.kind { break }
      if case .variableEnd = current.kind { break }
      items.append(conditional ? try parseExpression() : try parseOr())
    }
    return .tuple(items)
  }

  mutating func parseExpression() throws(JinjaError) -> JinjaExpression {
    try enter()
    defer { leave() }
    var expression = try parseOr()
    while skip(name: "if") {
      try chain()
      let condition = try parseOr()
      let otherwise = skip(name: "else") ? try parseExpression() : nil
      expression = .conditional(expression, condition: condition, otherwise: otherwise)
    }
    return expression
  }

  private mutating func parseOr() throws(JinjaError) -> JinjaExpression {
    var left = try parseAnd()
    while skip(name: "or") {
      try chain()
      left = .binary("or", left, try parseAnd())
    }
    return left
  }

  private mutating func parseAnd() throws(JinjaError) -> JinjaExpression {
    var left = try parseNot()
    while skip(name: "and") {
      try chain()
      left = .binary("and", left, try parseNot())
    }
    return left
  }

  private mutating func parseNot() throws(JinjaError) -> JinjaExpression {
    if skip(name: "not") {
      try enter()
      defer { leave() }
      return .unary("not", try parseNot())
    }
    return try parseCompare()
  }

  private mutating func parseCompare() throws(JinjaError) -> JinjaExpression {
    let left = try parseAdditive()
    var operations: [(String, JinjaExpression)] = []
    while true {
      if case .symbol(let symbol) = current.kind, ["==", "!=", "<", ">", "<=", ">="].contains(symbol) {
        advance()
        try chain()
        operations.append((symbol, try parseAdditive()))
      } else if skip(name: "in") {
        operations.append(("in", try parseAdditive()))
      } else if current.kind == .name("not"), tokens[index + 1].kind == .name("in") {
        index += 2
        operations.append(("not in", try parseAdditive()))
      } else {
        break
      }
    }
    return operations.isEmpty ? left : .compare(left, operations)
  }

  private mutating func parseAdditive() throws(JinjaError) -> JinjaExpression {
    var left = try parseConcat()
    while case .symbol(let symbol) = current.kind, symbol == "+" || symbol == "-" {
      advance()
      try chain()
      left = .binary(symbol, left, try parseConcat())
    }
    return left
  }

  private mutating func parseConcat() throws(JinjaError) -> JinjaExpression {
    var left = try parseMultiplicative()
    while skip(symbol: "~") {
      try chain()
      left = .binary("~", left, try parseMultiplicative())
    }
    return left
  }

  private mutating func parseMultiplicative() throws(JinjaError) -> JinjaExpression {
    var left = try parsePower()
    while case .symbol(let symbol) = current.kind, ["*", "/", "//", "%"].contains(symbol) {
      advance()
      try chain()
      left = .binary(symbol, left, try parsePower())
    }
    return left
  }

  private mutating func parsePower() throws(JinjaError) -> JinjaExpression {
    var left = try parseUnary(withFilter: true)
    while skip(symbol: "**") {
      try chain()
      left = .binary("**", left, try parseUnary(withFilter: true))
    }
    return left
  }

  private mutating func parseUnary(withFilter: Bool) throws(JinjaError) -> JinjaExpression {
    var node: JinjaExpression
    try enter()
    defer { leave() }
    if skip(symbol: "-") {
      node = .unary("-", try parseUnary(withFilter: false))
    } else if skip(symbol: "+") {
      node = try parseUnary(withFilter: false)
    } else {
      node = try parsePrimary()
    }
    node = try parsePostfix(node)
    return withFilter ? try parseFilterExpression(node) : node
  }

  private mutating func parsePrimary() throws(JinjaError) -> JinjaExpression {
    let token = current
    advance()
    switch token.kind {
    case .name(let name):
      switch name {
      case "true", "True": return .literal(.bool(true))
      case "false", "False": return .literal(.bool(false))
      case "none", "None": return .literal(.none)
      default: return .name(name)
      }
    case .string(var text):
      while case .string(let more) = current.kind {
        text += more
        advance()
      }
      return .literal(.string(text))
    case .integer(let value): return .literal(.int(value))
    case .float(let value): return .literal(.double(value))
    case .symbol("("):
      if skip(symbol: ")") { return .tuple([]) }
      let inner = try parseTuple()
      try expect(symbol: ")")
      return inner
    case .symbol("["):
      var items: [JinjaExpression] = []
      while !skip(symbol: "]") {
        if !items.isEmpty { try expect(symbol: ",") }
        if skip(symbol: "]") { break }
        items.append(try parseExpression())
      }
      return .list(items)
    case .symbol("{"):
      var pairs: [(JinjaExpression, JinjaExpression)] = []
      while !skip(symbol: "}") {
        if !pairs.isEmpty { try expect(symbol: ",") }
        if skip(symbol: "}") { break }
        let key = try parseExpression()
        try expect(symbol: ":")
        pairs.append((key, try parseExpression()))
      }
      return .dict(pairs)
    default:
      index -= 1
      throw error("unexpected token in expression")
    }
  }

  private mutating func parsePostfix(_ base: JinjaExpression) throws(JinjaError) -> JinjaExpression {
    var node = base
    while true {
      if skip(symbol: ".") {
        try chain()
        switch current.kind {
        case .name(let name): node = .attribute(node, name)
        case .integer(let value): node = .item(node, .literal(.int(value)))
        default: throw error("expected an attribute name")
        }
        advance()
      } else if skip(symbol: "[") {
        try chain()
        node = try parseSubscript(node)
      } else if current.kind == .symbol("(") {
        try chain()
        node = .call(node, try parseCallArguments())
      } else {
        return node
      }
    }
  }

  private mutating func parseSubscript(_ base: JinjaExpression) throws(JinjaError) -> JinjaExpression {
    var parts: [JinjaExpression?] = [nil]
    var isSlice = false
    while !skip(symbol: "]") {
      if skip(symbol: ":") {
        isSlice = true
        parts.append(nil)
      } else {
        parts[parts.count - 1] = try parseExpression()
      }
    }
    guard isSlice else {
      guard let key = parts[0] else { throw error("empty subscript") }
      return .item(base, key)
    }
    return .slice(base, start: parts[0], stop: parts.count > 1 ? parts[1] : nil, step: parts.count > 2 ? parts[2] : nil)
  }

  mutating func parseCallArguments() throws(JinjaError) -> JinjaCallArguments {
    try expect(symbol: "(")
    var arguments = JinjaCallArguments()
    while !skip(symbol: ")") {
      if !arguments.positional.isEmpty || !arguments.keyword.isEmpty { try expect(symbol: ",") }
      if skip(symbol: ")") { break }
      if case .name(let name) = current.kind, tokens[index + 1].kind == .symbol("=") {
        index += 2
        arguments.keyword.append((name, try parseExpression()))
      } else {
        arguments.positional.append(try parseExpression())
      }
    }
    return arguments
  }

  private mutating func parseFilterExpression(_ base: JinjaExpression) throws(JinjaError) -> JinjaExpression {
    var node = base
    while true {
      if current.kind == .symbol("|") {
        for (name, arguments) in try parseFilterChain(first: false) {
          try chain()
          node = .filter(node, name: name, arguments)
        }
      } else if skip(name: "is") {
        try chain()
        let negated = skip(name: "not")
        let name = try expectName()
        var arguments = JinjaCallArguments()
        if current.kind == .symbol("(") {
          arguments = try parseCallArguments()
        } else if startsTestArgument {
          arguments.positional = [try parsePostfix(try parsePrimary())]
        }
        node = .test(node, name: name, negated: negated, arguments)
      } else if current.kind == .symbol("(") {
        try chain()
        node = .call(node, try parseCallArguments())
      } else {
        return node
      }
    }
  }

  private var startsTestArgument: Bool {
    switch current.kind {
    case .name(let name): !["else", "or", "and"].contains(name)
    case .string, .integer, .float, .symbol("["), .symbol("{"): true
    default: false
    }
  }
}
