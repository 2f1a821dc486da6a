#pragma once
// The head of the standalone HTML pages (rocelab buffers, compare, qualify): one
// stylesheet for their tables, so the pages look alike. Private to experiments/src.
#include <string>
#include <string_view>

#include "rocelab/experiments/report/svg.hpp"

namespace rocelab::experiments {

// "<!DOCTYPE html>...<body>" with `title` (escaped) and the shared table styles plus
// `extra_css` (a page's own rules).
inline std::string html_page_head(std::string_view title, std::string_view extra_css = {}) {
  return "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>" + svg::escape(title) +
         "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:72em}table{border-collapse:collapse;"
         "margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right;vertical-align:top}"
         "th{text-align:left;background:#f4f4f4}td.bad{background:#fbe4e4}td.good{background:#e6f4e6}"
         "td.l{text-align:left}.note{color:#555;font-size:90%}" +
         std::string(extra_css) + "</style></head><body>\n";
}

}  // namespace rocelab::experiments
