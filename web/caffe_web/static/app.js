// The pages' live parts: job pages follow their job through Server-Sent Events
// (/jobs/<id>/events); the charts are Chart.js (Debian's libjs-chart.js, served by the server).
'use strict';

const caffeWeb = {charts: {}, updates: 0};
window.caffeWeb = caffeWeb;

function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return '–';
  seconds = Math.round(seconds);
  if (seconds < 60) return seconds + ' s';
  if (seconds < 3600) return Math.floor(seconds / 60) + ' min ' + (seconds % 60) + ' s';
  return Math.floor(seconds / 3600) + ' h ' + Math.floor(seconds % 3600 / 60) + ' min';
}

function element(tag, attributes, text) {
  const node = document.createElement(tag);
  Object.entries(attributes || {}).forEach(([key, value]) => node.setAttribute(key, value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const FINAL = ['done', 'error', 'stopped', 'interrupted'];

// Follows /jobs/<id>/events; `query()` gives the counts the page has, so that a reconnection
// (the server restarted) sends only what is new.
function follow(jobId, query, onState) {
  let source = null;
  function connect() {
    source = new EventSource('/jobs/' + jobId + '/events' + query());
    source.addEventListener('state', (event) => {
      const state = JSON.parse(event.data);
      onState(state);
      caffeWeb.updates += 1;
      document.body.dataset.updates = caffeWeb.updates;
      if (FINAL.includes(state.status)) source.close();
    });
    source.onerror = () => { source.close(); setTimeout(connect, 1000); };
  }
  connect();
}

function setStatus(state) {
  const badge = document.getElementById('job-status');
  badge.textContent = state.status;
  badge.className = 'status ' + state.status;
  document.getElementById('stop-form').hidden = !['queued', 'running'].includes(state.status);
  document.getElementById('resume-form').hidden =
    !['stopped', 'interrupted', 'error'].includes(state.status);
  const error = document.getElementById('job-error');
  error.hidden = !state.error;
  error.textContent = state.error || '';
}

// ---- dataset page
function datasetPage() {
  const jobId = document.body.dataset.job;
  follow(jobId, () => '', (state) => {
    setStatus(state);
    const table = document.getElementById('stages');
    while (table.rows.length > 1) table.deleteRow(1);
    state.stages.forEach((stage) => {
      const row = table.insertRow();
      row.dataset.stage = stage.name;
      row.dataset.status = stage.status;
      row.insertCell().textContent = stage.name;
      row.insertCell().innerHTML = '<span class="stage ' + stage.status + '">' + stage.status + '</span>';
      const percent = stage.progress === null ? '' : Math.round(stage.progress * 100) + '%';
      const bar = row.insertCell();
      bar.innerHTML = '<div class="bar"><div style="width:' + (percent || '0%') + '"></div></div> ' + percent;
      row.insertCell().textContent = stage.status === 'running' ? formatSeconds(stage.eta) : '';
      const log = row.insertCell();
      log.appendChild(element('a', {href: '/jobs/' + jobId + '/log/' + stage.log}, 'log'));
    });
    const skipped = document.getElementById('skipped');
    skipped.innerHTML = '';
    state.skipped.forEach((item) => skipped.appendChild(
      element('li', {}, item.stage + ': line ' + item.line + ': ' + item.message)));
    document.getElementById('skipped-box').hidden = state.skipped.length === 0;
    if (state.status === 'done') showDatasetResults(jobId, state.class_counts);
  });
}

function showDatasetResults(jobId, classCounts) {
  document.getElementById('results').hidden = false;
  ['train', 'val'].forEach((split) => {
    const counts = classCounts[split] || [];
    document.getElementById('box-' + split).hidden = counts.length === 0;
    if (!counts.length || caffeWeb.charts[split]) return;
    const table = document.getElementById('counts-' + split);
    table.innerHTML = '<tr><th>Class</th><th>Images</th></tr>';
    counts.forEach(([name, count]) => {
      const row = table.insertRow();
      row.dataset.class = name;
      row.dataset.count = count;
      row.insertCell().textContent = name;
      row.insertCell().textContent = count;
    });
    caffeWeb.charts[split] = new Chart(document.getElementById('chart-' + split), {
      type: 'bar',
      data: {labels: counts.map((c) => c[0]),
             datasets: [{label: 'images', data: counts.map((c) => c[1]),
                         backgroundColor: split === 'train' ? '#3b7dd8' : '#e08a2c'}]},
      options: {animation: false, maintainAspectRatio: false, plugins: {legend: {display: false}},
                scales: {y: {beginAtZero: true}}},
    });
  });
  const mean = document.getElementById('mean-image');
  if (!mean.getAttribute('src')) mean.src = '/datasets/' + jobId + '/mean.png';
}

// ---- model page
const SERIES_STYLE = {
  'train loss': {color: '#3b7dd8', axis: 'y'},
  'val loss': {color: '#2ca02c', axis: 'y'},
  'val accuracy': {color: '#e08a2c', axis: 'y1'},
};

function lineChart(canvas, rightAxis) {
  const scales = {x: {type: 'linear', title: {display: true, text: 'epoch'}},
                  y: {type: 'linear', position: 'left'}};
  if (rightAxis) scales.y1 = {type: 'linear', position: 'right', min: 0, max: 1,
                              grid: {drawOnChartArea: false}};
  return new Chart(canvas, {
    type: 'line', data: {datasets: []},
    options: {animation: false, parsing: false, normalized: true, spanGaps: true,
              maintainAspectRatio: false,
              elements: {point: {radius: 0}, line: {borderWidth: 1.5}},
              interaction: {mode: 'nearest', intersect: false}, scales: scales},
  });
}

function addPoints(chart, label, points, style) {
  if (!points || !points.length) return;
  let dataset = chart.data.datasets.find((d) => d.label === label);
  if (!dataset) {
    dataset = {label: label, data: [], borderColor: style.color, backgroundColor: style.color,
               yAxisID: style.axis || 'y', stepped: style.stepped || false};
    chart.data.datasets.push(dataset);
  }
  points.forEach(([x, y]) => dataset.data.push({x: x, y: y}));
  // Keeps the page light over long runs: every other point goes past 4000.
  if (dataset.data.length > 4000) dataset.data = dataset.data.filter((_, i) => i % 2 === 0 || i === dataset.data.length - 1);
}

function modelPage() {
  const jobId = document.body.dataset.job;
  const loss = caffeWeb.charts.loss = lineChart(document.getElementById('loss-chart'), true);
  const lr = caffeWeb.charts.lr = lineChart(document.getElementById('lr-chart'), false);
  const counts = {train: 0, test: 0};
  const select = document.getElementById('snapshot-select');
  const syncSelection = () => {
    document.querySelectorAll('input[name=iteration]').forEach((i) => { i.value = select.value; });
    document.getElementById('download').href = '/models/' + jobId + '/download?iteration=' + select.value;
  };
  select.addEventListener('change', syncSelection);
  syncSelection();
  follow(jobId, () => '?train=' + counts.train + '&test=' + counts.test, (state) => {
    setStatus(state);
    const graph = state.graph;
    Object.entries(graph.train).forEach(([name, points]) =>
      addPoints(loss, 'train ' + name, points, SERIES_STYLE['train ' + name] || {color: '#888'}));
    Object.entries(graph.val).forEach(([name, points]) =>
      addPoints(loss, 'val ' + name, points, SERIES_STYLE['val ' + name] ||
                {color: '#a05', axis: name.includes('accuracy') ? 'y1' : 'y'}));
    addPoints(lr, 'learning rate', graph.lr, {color: '#7b3fb5', stepped: true});
    // From 0 to a tenth above the highest rate: Chart.js gives a constant series (a fixed rate,
    // or the first step of one) a range of +-1 around it, which draws 0.01 as a line at 0.
    const rates = lr.data.datasets.length ? lr.data.datasets[0].data.map((p) => p.y) : [];
    const highest = rates.length ? Math.max(...rates) : 0;
    lr.options.scales.y.min = 0;
    if (highest > 0) lr.options.scales.y.max = highest * 1.1;
    counts.train = graph.counts.train;
    counts.test = graph.counts.test;
    loss.update('none');
    lr.update('none');
    const points = loss.data.datasets.reduce((sum, d) => sum + d.data.length, 0);
    document.body.dataset.graphPoints = points;
    if (graph.last && graph.last.epoch !== undefined) document.getElementById('epoch').textContent = graph.last.epoch;
    document.getElementById('eta').textContent = state.status === 'running' ? formatSeconds(graph.eta_seconds) : '–';
    const process = state.process;
    document.getElementById('pid').textContent = process ? process.pid : '–';
    document.getElementById('cpu').textContent = process ? Math.round(process.cpu_percent) + '%' : '–';
    document.getElementById('memory').textContent = process ? Math.round(process.rss / 1048576) + ' MB' : '–';
    const known = Array.from(select.options).map((o) => Number(o.value));
    state.snapshots.forEach((snapshot) => {
      if (known.includes(snapshot.iteration)) return;
      select.insertBefore(element('option', {value: snapshot.iteration}, 'Epoch #' + snapshot.epoch), select.firstChild);
      select.value = snapshot.iteration;
    });
    syncSelection();
    if (!caffeWeb.firstGraphAt) {
      caffeWeb.firstGraphAt = performance.now();
      document.body.dataset.graphReady = 'true';
    }
  });
}

// ---- classification results: histograms of each layer's values
function classifyOnePage() {
  document.querySelectorAll('canvas.histogram').forEach((canvas) => {
    const histogram = JSON.parse(canvas.dataset.histogram);
    new Chart(canvas, {
      type: 'bar',
      data: {labels: histogram.edges.slice(0, -1).map((e) => e.toPrecision(2)),
             datasets: [{data: histogram.counts, backgroundColor: '#3b7dd8'}]},
      options: {animation: false, maintainAspectRatio: false, plugins: {legend: {display: false}},
                scales: {x: {ticks: {maxTicksLimit: 6}}}},
    });
  });
}

const PAGES = {'dataset': datasetPage, 'model': modelPage, 'classify-one': classifyOnePage};
document.addEventListener('DOMContentLoaded', () => {
  const page = PAGES[document.body.dataset.page];
  if (page) page();
});
