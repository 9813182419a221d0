'use strict';

var proto = module.exports = function (options) {
  return options;
};

/**
 * Handle a request.
 */
proto.handle = function handle(req, res, out) {
  var idx = 0;
  return idx;
};

Router.prototype.route = function route(path) {
  return path;
};

exports.parse = function (str) {
  return str.split(',');
};

const normalize = (value) => {
  return String(value).trim();
};

function plain() {}

class Widget extends Base {
  constructor(props) {
    super(props);
  }

  render() {
    return null;
  }
}
