// glog's line prefix as BVLC Caffe printed it: "I1201 21:19:00.953812 ..." (month and day),
// where glog >= 0.6 prints the year too ("I20261201 ..."). BVLC's tools/extra/parse_log.sh and
// extract_seconds.py, DIGITS and users' scripts read the older form.
#ifndef CAFFE_LOG_PREFIX_HPP_
#define CAFFE_LOG_PREFIX_HPP_

namespace caffe {

/// Makes glog print BVLC's prefix, without the year, unless the user asked for the year
/// (GLOG_log_year_in_prefix=1, or --log_year_in_prefix=true on a tool's command line). Call
/// before flags are parsed and before the first log line. GlobalInit and pycaffe call it.
void UseBvlcLogPrefix();

}  // namespace caffe

#endif  // CAFFE_LOG_PREFIX_HPP_
