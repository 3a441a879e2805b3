"""The web server: Flask routes for the home page, datasets, models, classification and the
live updates (Server-Sent Events). Every page reads the job folders (jobstore), so the server
holds nothing a restart could lose."""
import os

from flask import Flask, abort, render_template, send_file
from werkzeug.exceptions import RequestEntityTooLarge

from .jobstore import JobStore
from .scheduler import Scheduler

CHART_JS = '/usr/share/javascript/chart.js/chart.min.js'  # Debian's libjs-chart.js


def create_app(config, start_scheduler=True):
    app = Flask(__name__)
    app.config['MAX_CONTENT_LENGTH'] = config.max_upload_bytes
    app.config['CAFFE_WEB'] = config
    store = JobStore(config.jobs_dir)
    app.extensions['caffe_store'] = store
    scheduler = Scheduler(store, config)
    app.extensions['caffe_scheduler'] = scheduler

    from . import views_datasets, views_home, views_models, views_timeline
    app.register_blueprint(views_home.blueprint)
    app.register_blueprint(views_datasets.blueprint)
    app.register_blueprint(views_models.blueprint)
    app.register_blueprint(views_timeline.blueprint)

    @app.route('/vendor/chart.js')
    def chart_js():
        if not os.path.isfile(CHART_JS):
            abort(404, 'Chart.js is missing: install Debian\'s libjs-chart.js '
                       '(scripts/install_deps.sh)')
        return send_file(CHART_JS, mimetype='application/javascript', max_age=3600)

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(error):
        limit = config.max_upload_bytes / (1024.0 * 1024.0)
        return render_template('error.html', title='Upload too large', message=(
            'Upload: the request is larger than this server\'s limit of {:g} MB '
            '(web.sh --max-upload-mb); nothing was saved.'.format(limit))), 413

    @app.errorhandler(404)
    def not_found(error):
        return render_template('error.html', title='Not found',
                               message=getattr(error, 'description', str(error))), 404

    if start_scheduler:
        scheduler.start()
    return app
